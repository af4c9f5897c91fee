"""POST /api/v1/monitors/{id}/pause and /resume."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import assert_error, create, sqlite_only
from tests.notification_rows import add_notification
from uptime_server.models import Monitor, MonitorLocation, Notification, Outbox

URL = "/api/v1/monitors"


def test_it_pauses_keeping_the_last_status(alice: Any, clock: Any) -> None:
    mid = create(alice)
    Monitor.update(status="offline").where(Monitor.id == mid).execute()
    clock.advance(minutes=3)
    response = alice.post(f"{URL}/{mid}/pause", json={"reason": "maintenance window"})
    assert response.status_code == 200
    body = response.get_json()
    assert body["message"] == "Monitor paused"
    monitor = body["data"]
    assert monitor["paused"] is True
    assert monitor["paused_at"] == "2026-11-22T12:03:00Z"
    assert monitor["pause_reason"] == "maintenance window"
    assert monitor["status"] == "offline"
    assert monitor["next_check_at"] is None
    assert alice.get(f"{URL}/{mid}").get_json()["data"] == monitor


def test_it_pauses_without_a_body_or_reason(alice: Any) -> None:
    first, second = create(alice), create(alice)
    response = alice.post(f"{URL}/{first}/pause")
    assert response.status_code == 200
    assert response.get_json()["data"]["pause_reason"] is None
    response = alice.post(f"{URL}/{second}/pause", json={})
    assert response.get_json()["data"]["paused"] is True


def test_it_refuses_pausing_twice(alice: Any) -> None:
    mid = create(alice)
    alice.post(f"{URL}/{mid}/pause", json={"reason": "first"})
    response = alice.post(f"{URL}/{mid}/pause", json={"reason": "second"})
    assert_error(response, 409, "MONITOR_ALREADY_PAUSED")
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["pause_reason"] == "first"


def test_it_validates_the_reason(alice: Any) -> None:
    mid = create(alice)
    for body, field in (
        ({"reason": "r" * 501}, "reason"),
        ({"reason": 5}, "reason"),
        ({"reason": "nul\x00"}, "reason"),
        ({"why": "x"}, "why"),
        (["reason"], "body"),
    ):
        response = alice.post(f"{URL}/{mid}/pause", json=body)
        assert_error(response, 400, "VALIDATION_ERROR", field)
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["paused"] is False
    assert alice.post(f"{URL}/{mid}/pause", json={"reason": "r" * 500}).status_code == 200


@sqlite_only
def test_it_names_every_bad_field_at_once(alice: Any) -> None:
    mid = create(alice)
    response = alice.post(f"{URL}/{mid}/pause", json={"reason": 5, "why": "x"})
    assert_error(response, 400, "VALIDATION_ERROR", "reason", "why", only=True)


def test_it_resolves_the_active_downtime_without_email(alice: Any, clock: Any) -> None:
    mid = create(alice)
    started = clock.now()
    incident = add_notification(mid, alice.user.id, started, "api is DOWN")
    outbox_before = Outbox.select().count()
    clock.advance(seconds=250)
    assert alice.post(f"{URL}/{mid}/pause").status_code == 200
    incident = Notification.get_by_id(incident.id)
    assert incident.status == "resolved"
    assert incident.resolved_at == clock.now()
    assert incident.duration == 250
    # No recovery notification and nothing queued for delivery.
    assert Notification.select().where(Notification.monitor == mid).count() == 1
    assert Outbox.select().count() == outbox_before


def test_it_resumes_as_pending_and_due_now(alice: Any, clock: Any) -> None:
    mid = create(alice)
    Monitor.update(status="offline", consecutive_failures=4).where(Monitor.id == mid).execute()
    alice.post(f"{URL}/{mid}/pause", json={"reason": "deploy"})
    clock.advance(hours=2)
    response = alice.post(f"{URL}/{mid}/resume")
    assert response.status_code == 200
    body = response.get_json()
    assert body["message"] == "Monitor resumed"
    monitor = body["data"]
    assert (monitor["paused"], monitor["paused_at"], monitor["pause_reason"]) == (False, None, None)
    assert monitor["status"] == "pending"
    assert monitor["next_check_at"] == "2026-11-22T14:00:00Z"
    assert Monitor.get_by_id(mid).consecutive_failures == 0
    slot = MonitorLocation.get(MonitorLocation.monitor == mid)
    assert slot.next_check_at == clock.now()


def test_it_refuses_resuming_a_running_monitor(alice: Any) -> None:
    mid = create(alice)
    assert_error(alice.post(f"{URL}/{mid}/resume"), 409, "MONITOR_NOT_PAUSED")
    alice.post(f"{URL}/{mid}/pause")
    assert alice.post(f"{URL}/{mid}/resume").status_code == 200
    assert_error(alice.post(f"{URL}/{mid}/resume"), 409, "MONITOR_NOT_PAUSED")


def test_it_pauses_and_resumes_a_dns_monitor(alice: Any, clock: Any) -> None:
    # dns monitors were stored and never scheduled; since issue 12 they are checked.
    body = {"name": "resolver", "type": "dns", "url": "dns://example.test"}
    mid = alice.post(URL, json=body).get_json()["data"]["id"]
    assert alice.post(f"{URL}/{mid}/pause").get_json()["data"]["paused"] is True
    resumed = alice.post(f"{URL}/{mid}/resume").get_json()["data"]
    assert resumed["status"] == "pending"
    slot = MonitorLocation.get(MonitorLocation.monitor == mid)
    assert slot.next_check_at == clock.now()


def test_it_answers_404_for_unknown_monitors(alice: Any) -> None:
    assert_error(alice.post(f"{URL}/404/pause"), 404, "MONITOR_NOT_FOUND")
    assert_error(alice.post(f"{URL}/404/resume"), 404, "MONITOR_NOT_FOUND")
