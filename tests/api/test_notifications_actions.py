"""POST /notifications/{id}/acknowledge and /resolve (docs/api.md#acknowledge-and-resolve)."""

from __future__ import annotations

import pytest

from tests.notify.world import make_monitor
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, Notification, Outbox


@pytest.fixture
def monitor(alice, settings, clock):
    return make_monitor(alice.user, settings, clock)


@pytest.fixture
def checks(settings, clock):
    recorder = Recorder(settings)

    def run(monitor, *results):
        for result in results:
            recorder.record([outcome(monitor, clock, result == "up")], now=clock.now())
            clock.advance(60)

    return run


@pytest.fixture
def active(monitor, checks):
    checks(monitor, "down")
    return Notification.get()


def test_acknowledge(alice, active, clock):
    r = alice.post(f"/api/v1/notifications/{active.id}/acknowledge")
    assert r.status_code == 200
    assert r.json == {
        "message": "Notification acknowledged",
        "data": {"id": active.id, "acknowledged": True, "acknowledged_at": "2026-11-22T12:01:00Z"},
    }
    note = Notification.get_by_id(active.id)
    assert (note.status, note.acknowledged) == ("active", True)
    detail = alice.get(f"/api/v1/notifications/{active.id}").json["data"]
    assert (detail["acknowledged"], detail["acknowledged_at"]) == (True, "2026-11-22T12:01:00Z")


def test_acknowledging_twice_keeps_the_first_time(alice, active, clock):
    alice.post(f"/api/v1/notifications/{active.id}/acknowledge")
    clock.advance(300)
    r = alice.post(f"/api/v1/notifications/{active.id}/acknowledge")
    assert r.status_code == 200
    assert r.json["data"]["acknowledged_at"] == "2026-11-22T12:01:00Z"


def test_an_acknowledged_incident_still_recovers_and_mails(alice, monitor, active, checks):
    alice.post(f"/api/v1/notifications/{active.id}/acknowledge")
    checks(monitor, "down", "up")
    assert Notification.get_by_id(active.id).status == "resolved"
    assert [o.subject for o in Outbox.select().order_by(Outbox.id)] == [
        "[Uptime] DOWN: api-prod",
        "[Uptime] UP: api-prod",
    ]


def test_resolve(alice, active, clock):
    clock.advance(3600)
    r = alice.post(f"/api/v1/notifications/{active.id}/resolve")
    assert r.status_code == 200
    assert r.json == {
        "message": "Notification resolved",
        "data": {"id": active.id, "status": "resolved", "resolved_at": "2026-11-22T13:01:00Z"},
    }
    detail = alice.get(f"/api/v1/notifications/{active.id}").json["data"]
    assert (detail["status"], detail["duration"]) == ("resolved", 3660)
    assert alice.get("/api/v1/notifications/active").json["meta"]["count"] == 0
    # Resolving by hand sends nothing and creates no recovery notification.
    assert Outbox.select().count() == 1
    assert Notification.select().count() == 1


def test_resolved_by_hand_while_failing_stays_quiet_until_recovery(alice, monitor, active, checks):
    alice.post(f"/api/v1/notifications/{active.id}/resolve")
    assert Monitor.get_by_id(monitor.id).alerts_suppressed is True
    checks(monitor, "down", "down", "down")
    assert Notification.select().count() == 1  # no new incident while still failing
    checks(monitor, "up")
    assert Monitor.get_by_id(monitor.id).alerts_suppressed is False
    assert Notification.select().count() == 1  # nothing was active, so no recovery either
    checks(monitor, "down")
    notes = list(Notification.select().order_by(Notification.id))
    assert [(n.type, n.status) for n in notes] == [("downtime", "resolved"), ("downtime", "active")]
    assert Outbox.select().count() == 2  # one DOWN email per real outage


@pytest.mark.parametrize("action", ["acknowledge", "resolve"])
def test_actions_on_a_resolved_notification_conflict(alice, monitor, active, checks, action):
    checks(monitor, "up")
    r = alice.post(f"/api/v1/notifications/{active.id}/{action}")
    assert r.status_code == 409
    assert r.json["error"]["code"] == "NOTIFICATION_NOT_ACTIVE"
    recovery = Notification.get(Notification.type == "recovery")
    r = alice.post(f"/api/v1/notifications/{recovery.id}/{action}")
    assert r.status_code == 409
    assert r.json["error"]["code"] == "NOTIFICATION_NOT_ACTIVE"
    assert Notification.get_by_id(active.id).acknowledged is False


def test_resolving_twice_conflicts_and_keeps_the_first_resolution(alice, active, clock):
    alice.post(f"/api/v1/notifications/{active.id}/resolve")
    clock.advance(60)
    r = alice.post(f"/api/v1/notifications/{active.id}/resolve")
    assert r.status_code == 409
    assert Notification.get_by_id(active.id).resolved_at == active.started_at.replace(minute=1)


def test_a_cross_site_post_is_refused(alice, active):
    r = alice.post(
        f"/api/v1/notifications/{active.id}/resolve", headers={"Origin": "https://evil.example"}
    )
    assert r.status_code == 403
    assert Notification.get_by_id(active.id).status == "active"


def test_a_monitor_changed_to_another_checked_type_keeps_its_incident(alice, monitor, active):
    # Issue 12: ping is checked now (a move to an unchecked type resolved the
    # incident); the next check of the new type ends it, or not.
    body = {"type": "ping", "url": "ping://127.0.0.1"}
    r = alice.put(f"/api/v1/monitors/{monitor.id}", json=body)
    assert r.status_code == 200, r.json
    note = Notification.get_by_id(active.id)
    assert (note.status, note.resolved_at) == ("active", None)
    assert Outbox.select().count() == 1
