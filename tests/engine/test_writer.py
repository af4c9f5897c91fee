"""The writer thread's batching (``engine/writer.py``), with a real recorder in a child process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest

from uptime_server.engine.outcomes import CheckOutcome, Recorded
from uptime_server.engine.recorder_process import RecorderProcess
from uptime_server.engine.writer import ResultWriter
from uptime_server.models import CheckRun

from ..outcomes import outcome


class CountingSink:
    """A recorder process that also keeps the size of every batch it was given."""

    def __init__(self, child: RecorderProcess) -> None:
        self.child = child
        self.batches: list[int] = []

    def record(self, outcomes: list[CheckOutcome], *, now: datetime) -> list[Recorded]:
        self.batches.append(len(outcomes))
        return self.child.record(outcomes, now=now)


@pytest.fixture
def sink(db, settings) -> Iterator[CountingSink]:  # type: ignore[no-untyped-def]
    child = RecorderProcess(settings)
    yield CountingSink(child)
    child.close()


@pytest.fixture
def make_writer(sink: CountingSink, clock) -> Iterator[Callable[..., ResultWriter]]:  # type: ignore[no-untyped-def]
    """Writers into *sink*, stopped at the end (before the child closes)."""
    made: list[ResultWriter] = []

    def make(**kw: Any) -> ResultWriter:
        made.append(ResultWriter(sink, clock, push_forward=lambda claims, now: None, **kw))
        return made[-1]

    yield make
    for writer in made:
        writer.stop()


def test_it_writes_what_arrived_while_a_batch_filled_as_one_batch(
    sink, make_writer, clock, make_monitor
):  # type: ignore[no-untyped-def]
    monitors = [make_monitor(f"w{i}") for i in range(3)]
    writer = make_writer(max_wait=60)  # only the flush ends the wait
    writer.put_many([outcome(monitors[0], clock, True)])
    writer.put_many([outcome(m, clock, True) for m in monitors[1:]])
    assert writer.flush(30)
    assert sink.batches == [3]
    assert writer.recorded == 3
    assert CheckRun.select().count() == 3


def test_a_batch_stops_at_max_batch_and_the_rest_waits_for_the_next(
    sink, make_writer, clock, make_monitor
):  # type: ignore[no-untyped-def]
    monitors = [make_monitor(f"b{i}") for i in range(3)]
    writer = make_writer(max_batch=2, max_wait=60)
    for m in monitors:
        writer.put_many([outcome(m, clock, True)])
    assert writer.flush(30)
    assert sink.batches == [2, 1]
    assert writer.backlog == 0 and writer.recorded == 3


def test_stop_writes_what_is_queued(sink, make_writer, clock, make_monitor):  # type: ignore[no-untyped-def]
    m = make_monitor("s")
    writer = make_writer(max_wait=60)
    writer.put_many([outcome(m, clock, False)])
    writer.stop(timeout=30)
    assert sink.batches == [1] and writer.recorded == 1
    assert CheckRun.get().status == "offline"
