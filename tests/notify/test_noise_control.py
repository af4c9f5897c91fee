"""Noise control end to end: real checks of a local target, the recorder, the
reminder sweep, the delivery loop and aiosmtpd, under the manual clock, on
SQLite and PostgreSQL (docs/alerts.md).
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from tests.notify.world import subjects
from tests.threads import run_at_once
from uptime_server.clock import Clock
from uptime_server.daemon import process as daemon
from uptime_server.daemon.process import DaemonOptions, default_components
from uptime_server.engine.reminders import ReminderSweep, send_due_reminders
from uptime_server.models import Monitor, Notification, Outbox
from uptime_server.services import notifications as notification_service

DOWN, UP = "[Uptime] DOWN: api-prod", "[Uptime] UP: api-prod"
STILL = "[Uptime] STILL DOWN: api-prod"
FLAPPING = "[Uptime] FLAPPING: api-prod"


def kinds() -> list[str]:
    return [n.type for n in Notification.select().order_by(Notification.id)]


# --- recovery_threshold ------------------------------------------------------------


def test_recovery_threshold_holds_the_monitor_offline_until_met(world, alice):
    m = world.monitor(recovery_threshold=3, flap_threshold=None)
    world.check(m, status=503)
    world.check(m, status=200)
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [DOWN]
    assert Monitor.get_by_id(m.id).status == "offline"
    assert alice.get(f"/api/v1/monitors/{m.id}").json["data"]["status"] == "offline"
    assert Notification.get().status == "active"
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP]
    assert Monitor.get_by_id(m.id).status == "online"
    downtime = Notification.get(Notification.type == "downtime")
    assert downtime.duration == 180  # offline from the failure to the third pass


def test_a_failure_during_the_recovery_hold_keeps_the_same_downtime(world):
    m = world.monitor(recovery_threshold=2, flap_threshold=None)
    for status in (503, 200, 503, 200):
        world.check(m, status=status)
    world.deliver()
    assert subjects(world.inbox) == [DOWN]
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP]
    assert kinds() == ["downtime", "recovery"]


# --- reminders -----------------------------------------------------------------------


@pytest.fixture
def sweep(settings):
    return ReminderSweep(settings)


def test_reminders_at_the_interval_until_acknowledged(world, sweep, alice, clock):
    m = world.monitor(reminder_interval=600)
    opened = clock.now()
    world.check(m, status=503)
    world.deliver()
    clock.set(opened + timedelta(seconds=599))
    assert sweep.loop(clock.now()) == 1.0
    world.deliver()
    assert subjects(world.inbox) == [DOWN]
    clock.set(opened + timedelta(seconds=600))
    sweep.loop(clock.now())
    sweep.loop(clock.now())  # the same moment again: nothing more
    world.deliver()
    assert subjects(world.inbox) == [DOWN, STILL]
    reminder = Notification.get(Notification.type == "reminder")
    assert (reminder.status, reminder.duration) == ("resolved", 600)
    assert reminder.message.startswith("api-prod is still DOWN after 10m")
    clock.set(opened + timedelta(seconds=1200))
    sweep.loop(clock.now())
    world.deliver()
    assert subjects(world.inbox) == [DOWN, STILL, STILL]

    downtime = Notification.get(Notification.type == "downtime")
    assert alice.post(f"/api/v1/notifications/{downtime.id}/acknowledge").status_code == 200
    clock.set(opened + timedelta(seconds=3600))
    sweep.loop(clock.now())
    world.deliver()
    assert subjects(world.inbox) == [DOWN, STILL, STILL]
    assert kinds() == ["downtime", "reminder", "reminder"]


def test_resolving_stops_reminders(world, sweep, clock):
    m = world.monitor(reminder_interval=600)
    world.check(m, status=503)
    world.check(m, status=200)  # resolved a minute later
    clock.advance(3600)
    sweep.loop(clock.now())
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP]
    assert Notification.get(Notification.type == "downtime").next_reminder_at is None


def test_resolving_by_hand_stops_reminders(world, sweep, alice, clock):
    m = world.monitor(reminder_interval=600)
    world.check(m, status=503)
    downtime = Notification.get()
    notification_service.resolve(alice.acting, downtime.id, now=clock.now())
    clock.advance(3600)
    sweep.loop(clock.now())
    assert kinds() == ["downtime"]


def test_a_restart_neither_repeats_nor_loses_a_reminder(world, settings, clock):
    m = world.monitor(reminder_interval=600)
    opened = clock.now()
    world.check(m, status=503)
    clock.set(opened + timedelta(seconds=600))
    assert send_due_reminders(settings, clock.now()) == 1
    # A new process at the same moment finds nothing due; at the next interval, one.
    assert send_due_reminders(settings, clock.now()) == 0
    clock.set(opened + timedelta(seconds=1200))
    assert send_due_reminders(settings, clock.now()) == 1
    world.deliver()
    assert subjects(world.inbox) == [DOWN, STILL, STILL]


def test_two_daemons_send_each_reminder_once(world, settings, clock):
    monitors = [world.monitor(f"api-{i}", reminder_interval=600) for i in range(5)]
    opened = clock.now()
    world.check(*monitors, status=503)
    sweeps = [ReminderSweep(settings, batch=2) for _ in range(2)]
    for interval in (1, 2):
        clock.set(opened + timedelta(seconds=600 * interval))
        now = clock.now()

        def drain(sweep=None, now=now):
            while sweep.loop(now) == 0.0:
                pass

        run_at_once(*(lambda s=s: drain(s) for s in sweeps))
        assert Notification.select().where(Notification.type == "reminder").count() == 5 * interval
    assert sum(s.sent for s in sweeps) == 10
    world.deliver()
    assert sorted(subjects(world.inbox)).count("[Uptime] STILL DOWN: api-0") == 2


def test_turning_reminders_on_during_a_downtime_counts_from_its_start(world, sweep, alice, clock):
    m = world.monitor()
    opened = clock.now()
    world.check(m, status=503)
    clock.set(opened + timedelta(seconds=2000))
    r = alice.put(f"/api/v1/monitors/{m.id}/alerts", json={"reminder_interval": 600})
    assert r.status_code == 200
    assert Notification.get().next_reminder_at == opened + timedelta(seconds=600)
    sweep.loop(clock.now())  # overdue: one now, the next one interval later
    sweep.loop(clock.now())
    assert kinds() == ["downtime", "reminder"]
    assert Notification.get(Notification.type == "downtime").next_reminder_at == (
        clock.now() + timedelta(seconds=600)
    )
    alice.put(f"/api/v1/monitors/{m.id}/alerts", json={"reminder_interval": None})
    clock.advance(3600)
    sweep.loop(clock.now())
    assert kinds() == ["downtime", "reminder"]


# --- flapping --------------------------------------------------------------------------


def test_flapping_holds_alerts_sends_one_message_then_one_settle_message(world, alice, clock):
    m = world.monitor(flap_threshold=2, flap_window=600)
    # Three up/down changes in three minutes: the third (> 2), a DOWN, starts
    # flapping and is held.
    for status in (200, 503, 200, 503):
        world.check(m, status=status)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP, FLAPPING]
    assert alice.get(f"/api/v1/monitors/{m.id}").json["data"]["flapping"] is True
    [summary] = alice.get("/api/v1/monitors").json["data"]
    assert summary["flapping"] is True and summary["status"] == "offline"
    # More flapping: nothing is sent, nothing opens.
    for status in (200, 503, 200, 503, 200, 503):
        world.check(m, status=status)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP, FLAPPING]
    assert kinds() == ["downtime", "recovery", "flapping"]
    # Down from now on: once the changes in the 10-minute window are down to
    # one (2 // 2), it settles DOWN, and the held downtime opens, once.
    for _ in range(12):
        world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == [
        DOWN,
        UP,
        FLAPPING,
        "[Uptime] SETTLED DOWN: api-prod",
        DOWN,
    ]
    assert kinds() == ["downtime", "recovery", "flapping", "flapping_settled", "downtime"]
    settled = Notification.get(Notification.type == "flapping_settled")
    assert settled.message.startswith("api-prod stopped flapping and is DOWN")
    assert alice.get(f"/api/v1/monitors/{m.id}").json["data"]["flapping"] is False
    r = alice.get("/api/v1/notifications", query_string={"type": "flapping_settled"})
    assert [n["id"] for n in r.json["data"]] == [settled.id]


def test_settling_up_sends_only_the_final_state(world):
    m = world.monitor(flap_threshold=2, flap_window=600)
    for status in (200, 503, 200, 503, 200, 503, 200):
        world.check(m, status=status)
    for _ in range(12):
        world.check(m, status=200)
    world.deliver()
    # Flapping began on the third change (a DOWN, held); it settled UP with
    # no downtime open, so the settle message is the only one after it.
    assert subjects(world.inbox) == [DOWN, UP, FLAPPING, "[Uptime] SETTLED UP: api-prod"]
    assert Outbox.select().where(Outbox.status != "sent").count() == 0


def test_no_reminders_while_flapping(world, sweep, clock):
    m = world.monitor(flap_threshold=1, flap_window=3600, reminder_interval=600)
    # The second change, an UP, starts flapping: the downtime's resolve is held.
    for status in (200, 503, 200):
        world.check(m, status=status)
    assert Monitor.get_by_id(m.id).flapping_since is not None
    assert Notification.get(Notification.type == "downtime").status == "active"
    clock.advance(1200)
    sweep.loop(clock.now())
    assert kinds() == ["downtime", "flapping"]


# --- wiring: the daemon's thread and cron mode ----------------------------------------------


def _reminders() -> int:
    return Notification.select().where(Notification.type == "reminder").count()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_daemon_runs_the_reminder_sweep_in_a_thread(world, settings):
    m = world.monitor(reminder_interval=600)
    world.check(m, status=503)
    # Due by the wall clock, which the daemon's runner reads.
    Notification.update(next_reminder_at=Clock().now() - timedelta(seconds=1)).execute()
    [runner] = [c for c in default_components(settings, DaemonOptions()) if c.name == "reminders"]
    runner.start()
    try:
        for _ in range(100):
            if _reminders():
                break
            threading.Event().wait(0.05)
    finally:
        runner.stop(1)
    assert not runner.thread.is_alive()
    assert _reminders() == 1


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_cron_mode_queues_due_reminders_before_delivering(world, settings):
    m = world.monitor(reminder_interval=600)
    world.check(m, status=503)
    Notification.update(next_reminder_at=Clock().now() - timedelta(seconds=1)).execute()
    steps = daemon.ONCE_STEPS
    assert steps.index(daemon.send_reminders) < steps.index(daemon.deliver_pending)
    daemon.send_reminders(settings, DaemonOptions())
    daemon.send_reminders(settings, DaemonOptions())
    assert _reminders() == 1
