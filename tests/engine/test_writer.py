"""The writer thread's batching (``engine/writer.py``), with a real database worker."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest

from uptime_server import db as dbmod
from uptime_server.checks.outcomes import CheckOutcome, Recorded
from uptime_server.engine import recorder as recorder_module
from uptime_server.engine.dispatcher import Claim
from uptime_server.engine.worker import DatabaseWorker, InProcess
from uptime_server.engine.writer import ResultWriter
from uptime_server.models import CheckRun

from ..outcomes import outcome


class CountingSink:
    """A database worker that also keeps the size of every batch it was given."""

    remote = True

    def __init__(self, child: DatabaseWorker) -> None:
        self.child = child
        self.batches: list[int] = []

    def start(self) -> None:
        self.child.start()

    def close(self, timeout: float = 10.0) -> None:
        self.child.close(timeout)

    def record(
        self, outcomes: list[CheckOutcome], now: datetime, want_results: bool = False
    ) -> list[Recorded] | None:
        self.batches.append(len(outcomes))
        return self.child.record(outcomes, now, want_results)

    def push_forward(self, claims: list[Claim], now: datetime) -> None:
        pass


@pytest.fixture
def sink(db, settings) -> Iterator[CountingSink]:  # type: ignore[no-untyped-def]
    counting = CountingSink(DatabaseWorker(settings))
    yield counting
    counting.close()


@pytest.fixture
def make_writer(sink: CountingSink, clock) -> Iterator[Callable[..., ResultWriter]]:  # type: ignore[no-untyped-def]
    """Writers into *sink*, stopped at the end (before the child closes)."""
    made: list[ResultWriter] = []

    def make(**kw: Any) -> ResultWriter:
        made.append(ResultWriter(sink, clock, **kw))
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


# -- a database that goes away -----------------------------------------------------


@pytest.fixture
def quick_locks(db, settings, monkeypatch) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """SQLite whose lock gives up after 50 ms, tried once by the recorder: a lock held
    'past its timeout' within a test's time. Yields the database file."""
    if not dbmod.is_sqlite():
        pytest.skip("SQLite's lock")
    monkeypatch.setitem(dbmod.SQLITE_PRAGMAS, "busy_timeout", 50)
    monkeypatch.setattr(recorder_module, "retry_locked", lambda fn: dbmod.retry_locked(fn, 1))
    quick = dbmod.bind(settings.database_url)
    yield settings.database_url.removeprefix("sqlite:///")
    quick.close_all()


def test_a_batch_kept_through_a_locked_database_is_written_once_when_it_frees(
    quick_locks, settings, clock, make_monitor, caplog
):  # type: ignore[no-untyped-def]
    from uptime_server.db.outages import OUTAGES

    m = make_monitor("locked")
    OUTAGES.recovered()
    caplog.set_level(logging.INFO, logger="uptime.database")
    caplog.clear()
    holder = sqlite3.connect(quick_locks, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's writer, holding on
    writer = ResultWriter(InProcess(settings), clock)
    try:
        writer.put_many([outcome(m, clock, False)])
        deadline = time.monotonic() + 10
        while writer.unavailable_since is None or writer.backlog == 0:
            assert time.monotonic() < deadline, "the write never failed"
            time.sleep(0.02)
        assert not writer.flush(1.5)  # tried again and again meanwhile: still kept
        assert writer.unavailable_since == clock.now() and writer.last_written_at is None

        holder.execute("COMMIT")
        assert writer.flush(10)
        assert writer.unavailable_since is None and writer.last_written_at == clock.now()
        assert writer.recorded == 1 and writer.dropped == 0
        with dbmod.database.connection_context():
            assert [r.status for r in CheckRun.select()] == ["offline"]
    finally:
        holder.close()
        writer.stop(5)
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "uptime.database"]
    assert len(lines) == 2, lines  # one when it went, one when it came back; none per try
    assert lines[0][0] == "WARNING" and "database is locked" in lines[0][1]
    assert lines[1][0] == "INFO" and lines[1][1].startswith("database available again after")
    assert not [r for r in caplog.records if r.exc_info]
