"""The recorder over two and three locations: rounds, quorum, one alert (docs/alerts.md#locations).

Runs come in as the scheduler hands them over, one location at a time, with
the injected clock moving between rounds.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import (
    AlertSettings,
    CheckRun,
    Monitor,
    MonitorLocation,
    Notification,
    Outbox,
)


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_LOCATIONS": "eu,us,ap"}


def _round(rec, monitor, clock, **passed: bool) -> list[str | None]:
    """One run per location, in the order given; the monitor's status after each."""
    done = []
    for location, ok in passed.items():
        [d] = rec.record([outcome(monitor, clock, ok, location=location)], now=clock.now())
        assert d.skipped is None
        done.append(d.monitor_status)
    return done


def _emails() -> list[str]:
    return [o.subject for o in Outbox.select().order_by(Outbox.id)]


def test_one_failing_location_of_two_is_a_warning_without_alert(make_monitor, settings, clock):
    m = make_monitor("api", locations=["eu", "us"])
    rec = Recorder(settings)
    assert _round(rec, m, clock, eu=True, us=True) == ["pending", "online"]
    before = "online"
    for _ in range(5):
        clock.advance(60)
        # eu's failure leaves the round open; us's pass closes it.
        assert _round(rec, m, clock, eu=False, us=True) == [before, "warning"]
        before = "warning"
    monitor = Monitor.get_by_id(m.id)
    assert (monitor.status, monitor.consecutive_failures) == ("warning", 0)
    assert Notification.select().count() == 0 and _emails() == []
    # Per-location runs are all kept, with the monitor's status beside each.
    eu_runs = CheckRun.select().where(CheckRun.location == "eu").order_by(CheckRun.id)
    assert [r.status for r in eu_runs] == ["online"] + ["offline"] * 5
    assert {r.quorum_status for r in eu_runs[2:]} == {"warning"}


def test_two_of_two_failing_is_offline_with_one_email_then_recovery(make_monitor, settings, clock):
    m = make_monitor("api", locations=["eu", "us"])
    AlertSettings.update(min_failed_locations=2).where(AlertSettings.monitor == m.id).execute()
    rec = Recorder(settings)
    _round(rec, m, clock, eu=True, us=True)
    clock.advance(60)
    start = clock.now()
    # eu's failure leaves the round open; us's closes it: offline.
    assert _round(rec, m, clock, eu=False, us=False) == ["online", "offline"]
    for _ in range(3):
        clock.advance(60)
        assert _round(rec, m, clock, eu=False, us=False) == ["offline", "offline"]
    [down] = Notification.select()
    assert (down.type, down.status, down.started_at) == ("downtime", "active", start)
    assert _emails() == ["[Uptime] DOWN: api"]

    clock.advance(60)
    assert _round(rec, m, clock, eu=True, us=False) == ["offline", "warning"]
    notes = list(Notification.select().order_by(Notification.id))
    assert [(n.type, n.status) for n in notes] == [
        ("downtime", "resolved"),
        ("recovery", "resolved"),
    ]
    assert notes[0].duration == 240
    assert _emails() == ["[Uptime] DOWN: api", "[Uptime] UP: api"]


def test_alert_threshold_counts_rounds(make_monitor, settings, clock):
    m = make_monitor("api", locations=["eu", "us"])
    AlertSettings.update(alert_threshold=2).where(AlertSettings.monitor == m.id).execute()
    rec = Recorder(settings)
    _round(rec, m, clock, eu=False, us=False)  # four failed runs, two rounds
    clock.advance(60)
    _round(rec, m, clock, eu=False, us=False)
    assert Monitor.get_by_id(m.id).consecutive_failures == 2
    assert _emails() == ["[Uptime] DOWN: api"]


def test_a_stale_location_is_left_out(make_monitor, settings, clock):
    m = make_monitor("api", locations=["eu", "us", "ap"])  # majority: 2
    rec = Recorder(settings)
    _round(rec, m, clock, eu=True, us=True, ap=False)
    assert Monitor.get_by_id(m.id).status == "warning"
    # ap stops reporting; eu and us fail. ap is fresh until 90 s after its run.
    clock.advance(60)
    assert _round(rec, m, clock, eu=False, us=False) == ["warning", "warning"]
    clock.advance(60)
    assert _round(rec, m, clock, eu=False) == ["offline"]
    # ap's last (failed) run was not what made it offline: two fresh locations are.
    assert [n.type for n in Notification.select()] == ["downtime"]
    slots = {s.location: s.last_status for s in MonitorLocation.select()}
    assert slots == {"eu": "offline", "us": "offline", "ap": "offline"}


def test_the_monitor_shows_its_locations_and_which_are_stale(make_monitor, settings, clock, alice):
    m = make_monitor("api", locations=["eu", "us"])
    rec = Recorder(settings)
    t0 = clock.now()
    _round(rec, m, clock, eu=True, us=False)
    clock.advance(100)
    _round(rec, m, clock, eu=True)
    data = alice.get(f"/api/v1/monitors/{m.id}").get_json()["data"]
    assert data["locations_status"] == [
        {
            "location": "eu",
            "status": "online",
            "checked_at": (t0 + timedelta(seconds=100)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "stale": False,
        },
        {
            "location": "us",
            "status": "offline",
            "checked_at": t0.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "stale": True,
        },
    ]
    assert data["stale_locations"] == ["us"]
    assert data["status"] == "online"  # us's old failure left out
    history = alice.get(f"/api/v1/monitors/{m.id}/history").get_json()["data"]
    assert [(h["location"], h["status"], h["quorum_status"]) for h in history] == [
        ("eu", "online", "online"),
        ("us", "offline", "warning"),
        ("eu", "online", "pending"),
    ]


def test_a_single_location_closes_a_round_at_every_run(make_monitor, settings, clock):
    m = make_monitor("api", locations=["eu"])
    rec = Recorder(settings)
    statuses = []
    for ok in (False, False, True):
        statuses += _round(rec, m, clock, eu=ok)
        clock.advance(3600)  # far apart: still one round each
    assert statuses == ["offline", "offline", "online"]
    assert _emails() == ["[Uptime] DOWN: api", "[Uptime] UP: api"]
