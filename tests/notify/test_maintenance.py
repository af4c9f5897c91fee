"""Maintenance windows end to end: real checks of a local target, the recorder,
the reminder sweep, the delivery loop and aiosmtpd, under the manual clock, on
SQLite and PostgreSQL (docs/maintenance.md).
"""

from __future__ import annotations

from datetime import timedelta

from tests.notify.world import subjects
from uptime_server.clock import isoformat
from uptime_server.engine.reminders import ReminderSweep
from uptime_server.models import CheckRun, Monitor, Notification

DOWN, UP = "[Uptime] DOWN: api-prod", "[Uptime] UP: api-prod"
STILL = "[Uptime] STILL DOWN: api-prod"
URL = "/api/v1/maintenance"


def kinds() -> list[str]:
    return [n.type for n in Notification.select().order_by(Notification.id)]


def open_window(alice, mid: int, seconds: int | None = None) -> int:
    w = alice.post(URL, json={"title": "deploy", "monitor_ids": [mid]}).get_json()["data"]
    body = {"duration": seconds} if seconds else {}
    assert alice.post(f"{URL}/{w['id']}/start", json=body).status_code == 200
    return w["id"]


def test_no_alert_in_the_window_and_one_after_it_while_still_down(world, alice, clock):
    m = world.monitor(alert_threshold=2, flap_threshold=None)
    world.check(m, status=200)
    open_window(alice, m.id, seconds=300)
    for _ in range(4):
        world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == [] and kinds() == []
    # Checks still ran and were recorded.
    assert CheckRun.select().where(CheckRun.monitor == m.id).count() == 5
    assert alice.get(f"/api/v1/monitors/{m.id}").get_json()["data"]["status"] == "maintenance"
    clock.advance(60)  # the window (5 minutes) is over
    ends = clock.now()
    world.check(m, status=503)
    world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == [DOWN]  # exactly once
    downtime = Notification.get()
    assert downtime.started_at == ends  # opened then, not in the window
    assert alice.get(f"/api/v1/monitors/{m.id}").get_json()["data"]["status"] == "offline"
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP]


def test_recovering_in_the_window_alerts_nothing(world, alice, clock):
    m = world.monitor(flap_threshold=None)
    window = open_window(alice, m.id)
    world.check(m, status=503)
    world.check(m, status=200)
    alice.post(f"{URL}/{window}/end")
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [] and kinds() == []
    assert Monitor.get_by_id(m.id).status == "online"


def test_a_monitor_down_before_the_window_keeps_its_downtime(world, alice, clock):
    m = world.monitor(flap_threshold=None)
    world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == [DOWN]
    first = Notification.get()
    window = open_window(alice, m.id)
    world.check(m, status=503)
    world.check(m, status=200)  # up in the window: nothing resolves, nothing sent
    world.check(m, status=503)
    alice.post(f"{URL}/{window}/end")
    world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == [DOWN]  # no second DOWN after the window
    assert kinds() == ["downtime"]
    assert Notification.get_by_id(first.id).status == "active"
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == [DOWN, UP]
    assert kinds() == ["downtime", "recovery"]


def test_no_reminder_in_the_window(world, alice, clock, settings):
    m = world.monitor(reminder_interval=600, flap_threshold=None)
    opened = clock.now()
    world.check(m, status=503)
    window = open_window(alice, m.id)
    sweep = ReminderSweep(settings)
    clock.set(opened + timedelta(seconds=600))
    sweep.loop(clock.now())
    world.deliver()
    assert subjects(world.inbox) == [DOWN]  # skipped in the window
    alice.post(f"{URL}/{window}/end")
    sweep.loop(clock.now())  # not replayed once it ends
    clock.set(opened + timedelta(seconds=1200))
    sweep.loop(clock.now())
    world.deliver()
    assert subjects(world.inbox) == [DOWN, STILL]


def test_flips_in_the_window_do_not_count_for_flapping(world, alice):
    m = world.monitor(flap_threshold=2, flap_window=3600)
    world.check(m, status=200)
    window = open_window(alice, m.id)
    for status in (503, 200, 503, 200, 503, 200):
        world.check(m, status=status)
    alice.post(f"{URL}/{window}/end")
    world.check(m, status=200)
    world.deliver()
    stored = Monitor.get_by_id(m.id)
    assert (stored.flapping_since, stored.state_changes) == (None, [])
    assert kinds() == [] and subjects(world.inbox) == []


def test_stats_leave_the_window_out(world, alice, clock):
    m = world.monitor(flap_threshold=None)
    world.check(m, status=200)
    world.check(m, status=200)
    start = clock.now()
    alice.post(
        URL,
        json={
            "title": "upgrade",
            "monitor_ids": [m.id],
            "starts_at": isoformat(start),
            "ends_at": isoformat(start + timedelta(minutes=3)),
        },
    )
    for _ in range(3):
        world.check(m, status=503)  # in the window
    world.check(m, status=200)
    stats = alice.get(f"/api/v1/monitors/{m.id}/stats?period=24h").get_json()["data"]
    assert stats["maintenance_seconds"] == 180
    assert stats["uptime"]["24h"] == 100.0
    assert stats["checks"] == {"total": 3, "successful": 3, "failed": 0}
    assert kinds() == []
