"""Roll-up cells a process has committed skip the insert on PostgreSQL (``known_cells``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Rollup
from uptime_server.stats import rollups
from uptime_server.stats.known_cells import KnownCells


def test_it_knows_the_cells_added_and_keeps_the_newest_buckets_of_each_resolution() -> None:
    known = KnownCells(keep_buckets=2)
    known.add([(1, 300, 0), (2, 300, 0), (1, 3600, 0)])
    assert known.among([(1, 300, 0), (2, 300, 0), (3, 300, 0), (1, 300, 300)]) == {
        (1, 300, 0),
        (2, 300, 0),
    }
    known.add([(1, 300, 300)])
    known.add([(1, 300, 600)])  # a third five-minute bucket: the oldest goes
    assert known.among([(1, 300, 0), (2, 300, 0), (1, 300, 300), (1, 300, 600)]) == {
        (1, 300, 300),
        (1, 300, 600),
    }
    assert known.among([(1, 3600, 0)]) == {(1, 3600, 0)}  # other resolutions keep theirs
    assert len(known) == 3
    known.forget()
    assert len(known) == 0 and known.among([(1, 300, 600)]) == set()


def _cells(monitor_id: int) -> list[tuple[int, int, int, int, int]]:
    query = Rollup.select(
        Rollup.monitor, Rollup.resolution, Rollup.checks, Rollup.failed, Rollup.rt_count
    ).where(Rollup.monitor == monitor_id)
    return sorted(query.tuples())


def _spy_inserts(monkeypatch: pytest.MonkeyPatch) -> list[list[Any]]:
    calls: list[list[Any]] = []
    real = rollups._insert_new

    def spy(keys: list[Any], cells: Any) -> set[Any]:
        calls.append(list(keys))
        return real(keys, cells)

    monkeypatch.setattr(rollups, "_insert_new", spy)
    return calls


def test_a_second_check_in_the_same_buckets_merges_without_the_insert(
    db: Any, make_monitor: Any, settings: Any, clock: Any, backend: str, monkeypatch: Any
) -> None:
    monitor = make_monitor("api")
    inserts = _spy_inserts(monkeypatch)
    recorder = Recorder(settings)
    recorder.record([outcome(monitor, clock, True)], now=clock.now())
    clock.advance(60)
    recorder.record([outcome(monitor, clock, False)], now=clock.now())
    # Both checks in each of the three rows: one run passed (timed), one failed.
    assert _cells(monitor.id) == [(monitor.id, r, 2, 1, 1) for r in (300, 3600, 86400)]
    if backend == "sqlite":  # one writer at a time: it reads, then inserts or updates
        assert inserts == [] and len(rollups.KNOWN) == 0
        return
    keys = [(monitor.id, r, int(clock.now().timestamp()) // r * r) for r in (300, 3600, 86400)]
    # The first batch tried to insert its three cells; the second, none.
    assert [sorted(call) for call in inserts] == [sorted(keys), []]
    assert rollups.KNOWN.among(keys) == set(keys)


# PostgreSQL only: SQLite's writer keeps no known cells.
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_known_cell_deleted_since_is_inserted_again(
    db: Any, make_monitor: Any, settings: Any, clock: Any
) -> None:
    monitor = make_monitor("api")
    recorder = Recorder(settings)
    recorder.record([outcome(monitor, clock, True)], now=clock.now())
    Rollup.delete().where(Rollup.resolution != 3600).execute()  # by hand, say
    clock.advance(60)
    recorder.record([outcome(monitor, clock, True)], now=clock.now())
    assert _cells(monitor.id) == [
        (monitor.id, 300, 1, 0, 1),  # the second check alone
        (monitor.id, 3600, 2, 0, 2),  # still known, merged
        (monitor.id, 86400, 1, 0, 1),
    ]
    # The memory was emptied for the gone cells, then given this batch's three.
    assert len(rollups.KNOWN) == 3


def test_a_batch_whose_commit_fails_leaves_its_cells_unknown(
    db: Any, make_monitor: Any, settings: Any, clock: Any, monkeypatch: Any
) -> None:
    monitor = make_monitor("api")

    def fail() -> None:
        raise RuntimeError("the commit fails")

    monkeypatch.setattr(db, "commit", fail)  # after the roll-ups were written
    with pytest.raises(RuntimeError, match="the commit fails"):
        Recorder(settings).record([outcome(monitor, clock, True)], now=clock.now())
    monkeypatch.undo()
    assert Rollup.select().count() == 0
    assert len(rollups.KNOWN) == 0
