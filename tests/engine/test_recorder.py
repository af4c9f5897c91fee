"""The writer's transaction: run, state, notification and outbox together."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import acting_of
from tests.engine.traces import traces
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import (
    AlertSettings,
    CheckRun,
    Monitor,
    MonitorLocation,
    Notification,
    Outbox,
    Rollup,
)
from uptime_server.services import monitors


@pytest.fixture
def monitor(make_monitor):
    return make_monitor("api-prod")


def test_it_records_a_passing_run(db, monitor, settings, clock):
    [done] = Recorder(settings).record([outcome(monitor, clock, True)], now=clock.now())
    assert done.run_status == "online" and done.monitor_status == "online"
    m = Monitor.get_by_id(monitor.id)
    assert (m.status, m.response_time, m.last_success) == ("online", 120, clock.now())
    assert CheckRun.select().count() == 1
    assert Rollup.select().count() == 3


def test_it_opens_one_incident_and_one_email_however_long_it_fails(db, monitor, settings, clock):
    rec = Recorder(settings)
    start = clock.now()
    for _ in range(5):
        rec.record([outcome(monitor, clock, False)], now=clock.now())
        clock.advance(60)
    notes = list(Notification.select())
    assert [(n.type, n.status) for n in notes] == [("downtime", "active")]
    assert notes[0].started_at == start
    assert notes[0].message == "api-prod is DOWN: expected status in [200], got 503"
    [email] = list(Outbox.select())
    assert email.recipients == ["alice@example.com"]
    assert email.subject == "[Uptime] DOWN: api-prod"

    rec.record([outcome(monitor, clock, True)], now=clock.now())
    down, up = list(Notification.select().order_by(Notification.id))
    assert (down.status, down.duration) == ("resolved", 300)
    assert (up.type, up.status, up.started_at, up.resolved_at) == (
        "recovery",
        "resolved",
        start,
        clock.now(),
    )
    assert up.message == "api-prod is UP again after 5m"
    assert Outbox.select().count() == 2
    assert Monitor.get_by_id(monitor.id).consecutive_failures == 0


def test_threshold_and_alert_flags_gate_the_outbox(db, monitor, settings, clock):
    AlertSettings.update(alert_threshold=3, alert_on_recovery=False, email_enabled=True).execute()
    rec = Recorder(settings)
    for _ in range(2):
        rec.record([outcome(monitor, clock, False)], now=clock.now())
        clock.advance(60)
    assert Notification.select().count() == 0
    rec.record([outcome(monitor, clock, False)], now=clock.now())
    assert Notification.select().count() == 1
    rec.record([outcome(monitor, clock, True)], now=clock.now())
    assert Notification.select().count() == 2
    assert Outbox.select().count() == 1  # no recovery email


def test_a_paused_monitor_keeps_its_status(db, monitor, settings, clock):
    monitors.pause_monitor(acting_of(monitor.user), monitor, "maintenance", now=clock.now())
    [done] = Recorder(settings).record([outcome(monitor, clock, False)], now=clock.now())
    assert done.skipped == "paused" and done.run_id is not None
    assert Monitor.get_by_id(monitor.id).status == "pending"
    assert Notification.select().count() == 0


def test_it_releases_the_lease_and_sets_the_due_time(db, monitor, settings, clock):
    due = clock.now() + timedelta(seconds=60)
    MonitorLocation.update(lease_owner="w1", lease_expires_at=clock.now()).execute()
    Recorder(settings).record(
        [outcome(monitor, clock, True, next_check_at=due, lease_owner="w1")], now=clock.now()
    )
    slot = MonitorLocation.get()
    assert (slot.lease_owner, slot.next_check_at, slot.last_status) == (None, due, "online")


def test_a_result_whose_lease_was_taken_over_is_refused(db, monitor, settings, clock):
    MonitorLocation.update(lease_owner="w2").execute()  # w1's lease expired; w2 took it
    [done] = Recorder(settings).record(
        [
            outcome(
                monitor,
                clock,
                False,
                next_check_at=clock.now() + timedelta(hours=1),
                lease_owner="w1",
            )
        ],
        now=clock.now(),
    )
    assert done.skipped == "lease_lost"
    assert MonitorLocation.get().lease_owner == "w2"
    assert CheckRun.select().count() == 0 and Rollup.select().count() == 0
    assert Monitor.get_by_id(monitor.id).consecutive_failures == 0


def test_only_the_first_of_two_results_of_one_lease_is_recorded(db, monitor, settings, clock):
    MonitorLocation.update(lease_owner="w1").execute()
    later = clock.now() + timedelta(hours=1)
    done = Recorder(settings).record(
        [outcome(monitor, clock, True, next_check_at=later, lease_owner="w1")] * 2,
        now=clock.now(),
    )
    assert [d.skipped for d in done] == [None, "lease_lost"]
    assert CheckRun.select().count() == 1


def test_one_broken_monitor_does_not_stop_the_batch(
    db, monitor, make_monitor, settings, clock, monkeypatch
):
    rec = Recorder(settings)
    original = rec._apply_state

    def explode(m, *a, **kw):
        if m.id == monitor.id:
            raise RuntimeError("boom")
        return original(m, *a, **kw)

    other = make_monitor("b")
    monkeypatch.setattr(rec, "_apply_state", explode)
    results = rec.record(
        [outcome(monitor, clock, True), outcome(other, clock, True)], now=clock.now()
    )
    assert [r.skipped for r in results] == ["error", None]
    assert Monitor.get_by_id(other.id).status == "online"
    assert CheckRun.select().where(CheckRun.monitor == monitor.id).count() == 0


# -- a monitor replaced under its check: same id, another monitor --------------


def replace_monitor(monitor, owner, at):
    """Delete *monitor* and put another monitor of *owner* under its id (created at *at*).

    What a reused id looks like to the recorder: SQLite handed deleted ids out
    again before migration 0002, and a restored backup can do the same.
    """
    row = Monitor.select().where(Monitor.id == monitor.id).dicts().get()
    monitors.delete_monitor(acting_of(monitor.user), monitor, now=at)
    row.update(user=owner.id, name="newcomer", created_at=at, updated_at=at)
    Monitor.insert(row).execute()
    AlertSettings.create(monitor=monitor.id)
    MonitorLocation.create(monitor=monitor.id, location="local", next_check_at=at)
    return Monitor.get_by_id(monitor.id)


def test_an_outcome_for_a_replaced_monitor_is_dropped(db, monitor, bob, settings, clock):
    failing = outcome(monitor, clock, False)
    clock.advance(1)
    newcomer = replace_monitor(monitor, bob.user, clock.now())
    assert newcomer.id == failing.monitor_id
    before = traces(newcomer.id)

    [done] = Recorder(settings).record([failing], now=clock.now())

    assert (done.skipped, done.run_id, done.run_status) == ("replaced", None, None)
    assert traces(newcomer.id) == before
    assert Notification.select().count() == 0 and Outbox.select().count() == 0


def test_a_batch_drops_the_replaced_monitors_runs_and_keeps_the_rest(
    db, monitor, make_monitor, bob, settings, clock
):
    other = make_monitor("other")
    stale = [outcome(monitor, clock, False), outcome(other, clock, False)]
    clock.advance(1)
    newcomer = replace_monitor(monitor, bob.user, clock.now())
    before = traces(newcomer.id)
    fresh = outcome(newcomer, clock, True)

    done = Recorder(settings).record([*stale, fresh], now=clock.now())

    assert [d.skipped for d in done] == ["replaced", None, None]
    assert Monitor.get_by_id(other.id).status == "offline"
    assert Notification.get().monitor_id == other.id
    # The newcomer's own run is recorded, and only that one.
    after = traces(newcomer.id)
    assert (after["runs"], after["notifications"], after["state"]["status"]) == (1, 0, "online")
    assert before["runs"] == 0
