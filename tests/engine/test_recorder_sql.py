"""The recorder's set-wise batch: many runs, one transaction, same answers as one by one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import acting_of
from tests.outcomes import outcome_at as run
from uptime_server.engine import recorder_sql
from uptime_server.engine.recorder import Recorder, StaleState
from uptime_server.models import CheckRun, Monitor, MonitorLocation, Notification, Outbox
from uptime_server.services import monitors as monitor_service


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_LOCATIONS": "local,eu"}


def test_runs_get_their_ids_in_order(make_monitor, settings, clock):
    monitors = [make_monitor(f"m{i}") for i in range(150)]  # more than one INSERT chunk
    done = Recorder(settings).record([run(m, clock.now(), True) for m in monitors], now=clock.now())
    for m, d in zip(monitors, done, strict=True):
        assert CheckRun.get_by_id(d.run_id).monitor_id == m.id
    assert len({d.run_id for d in done}) == 150


def test_a_failure_and_a_recovery_in_one_batch(make_monitor, settings, clock):
    m = make_monitor("api")
    t0 = clock.now()
    down, up = Recorder(settings).record(
        [run(m, t0, False), run(m, t0 + timedelta(seconds=60), True)], now=clock.now()
    )
    assert (down.monitor_status, len(down.opened)) == ("offline", 1)
    assert (up.monitor_status, up.resolved) == ("online", down.opened)
    notes = list(Notification.select().order_by(Notification.id))
    assert [(n.type, n.status) for n in notes] == [
        ("downtime", "resolved"),
        ("recovery", "resolved"),
    ]
    assert notes[0].duration == 60
    assert Outbox.select().count() == 2
    monitor = Monitor.get_by_id(m.id)
    assert (monitor.status, monitor.consecutive_failures, monitor.state_version) == ("online", 0, 2)
    assert (monitor.last_failure, monitor.last_success) == (t0, t0 + timedelta(seconds=60))


def test_locations_combine_within_a_batch(make_monitor, settings, clock):
    m = make_monitor("both", locations=["local", "eu"])
    local, eu = Recorder(settings).record(
        [run(m, clock.now(), False), run(m, clock.now(), True, location="eu")], now=clock.now()
    )
    # local's run opens the round (eu has no run yet), eu's closes it.
    assert (local.monitor_status, eu.monitor_status) == ("pending", "warning")
    slots = {s.location: s.last_status for s in MonitorLocation.select()}
    assert slots == {"local": "offline", "eu": "online"}
    assert [r.quorum_status for r in CheckRun.select().order_by(CheckRun.id)] == [
        "pending",
        "warning",
    ]


def test_a_deleted_monitor_is_skipped_and_the_rest_recorded(make_monitor, settings, clock):
    gone, kept = make_monitor("gone"), make_monitor("kept")
    outcomes = [run(gone, clock.now(), True), run(kept, clock.now(), True)]
    monitor_service.delete_monitor(acting_of(gone.user), gone, now=clock.now())
    done = Recorder(settings).record(outcomes, now=clock.now())
    assert [d.skipped for d in done] == ["deleted", None]
    assert [r.monitor_id for r in CheckRun.select()] == [kept.id]


def test_only_the_lease_holder_moves_the_schedule(make_monitor, settings, clock):
    mine, theirs, adhoc = make_monitor("mine"), make_monitor("theirs"), make_monitor("adhoc")
    MonitorLocation.update(lease_owner="w/1").where(
        MonitorLocation.monitor.in_([mine.id, theirs.id])
    ).execute()
    later = clock.now() + timedelta(seconds=60)
    Recorder(settings).record(
        [
            run(mine, clock.now(), True, next_check_at=later, lease_owner="w/1"),
            run(theirs, clock.now(), True, next_check_at=later, lease_owner="w/0"),
            run(adhoc, clock.now(), False),
        ],
        now=clock.now(),
    )
    slot = {s.monitor_id: s for s in MonitorLocation.select()}
    assert (slot[mine.id].next_check_at, slot[mine.id].lease_owner) == (later, None)
    assert (slot[theirs.id].next_check_at, slot[theirs.id].lease_owner) == (clock.now(), "w/1")
    assert slot[theirs.id].last_status is None
    assert (slot[adhoc.id].next_check_at, slot[adhoc.id].last_status) == (clock.now(), "offline")


def test_many_rows_give_the_same_answers(make_monitor, settings, clock):
    """Many rows through one statement each; a monitor written three times moves three versions."""
    monitors = [make_monitor(f"m{i}") for i in range(7)]
    MonitorLocation.update(lease_owner="w/1").execute()
    t0, later = clock.now(), clock.now() + timedelta(seconds=60)
    outcomes = [run(m, t0, True, next_check_at=later, lease_owner="w/1") for m in monitors]
    # The first monitor again, twice: each write guarded by the version the one before left.
    outcomes += [run(monitors[0], t0 + timedelta(seconds=s), s == 20) for s in (10, 20)]
    done = Recorder(settings).record(outcomes, now=clock.now())
    assert [CheckRun.get_by_id(d.run_id).monitor_id for d in done] == [
        o.monitor_id for o in outcomes
    ]
    first = Monitor.get_by_id(monitors[0].id)
    assert (first.state_version, first.status) == (3, "online")
    assert (first.last_success, first.last_failure) == (
        t0 + timedelta(seconds=20),
        t0 + timedelta(seconds=10),
    )
    assert {m.state_version for m in Monitor.select().where(Monitor.id != first.id)} == {1}
    slots = list(MonitorLocation.select())
    assert {(s.next_check_at, s.lease_owner) for s in slots} == {(later, None)}


@pytest.mark.parametrize(
    ("version_bump", "runs_of_b"),
    [
        pytest.param(7, [(0, True)], id="one-run-each"),
        pytest.param(1, [(0, False), (30, True)], id="several-runs-of-the-stale-monitor"),
    ],
)
def test_a_state_that_moved_under_the_batch_rolls_everything_back(
    make_monitor, settings, clock, monkeypatch, version_bump, runs_of_b
):
    a, b = make_monitor("a"), make_monitor("b")
    real_load = recorder_sql.Batch.load

    def stale_load(ids):  # type: ignore[no-untyped-def]
        batch = real_load(ids)
        batch.monitors[b.id].state_version += version_bump  # as if read before someone else's write
        return batch

    monkeypatch.setattr(recorder_sql.Batch, "load", staticmethod(stale_load))
    outcomes = [run(a, clock.now(), True)]
    outcomes += [run(b, clock.now() + timedelta(seconds=s), passed) for s, passed in runs_of_b]
    with pytest.raises(StaleState):
        Recorder(settings).record(outcomes, now=clock.now())
    assert CheckRun.select().count() == 0
    assert Monitor.get_by_id(a.id).status == "pending"
    assert [m.state_version for m in Monitor.select().order_by(Monitor.id)] == [0, 0]
