"""Deleting a team deletes its data and stops its checks (docs/teams.md).

The cascade takes the team's monitors (their schedule rows, runs,
notifications), channels, status pages, windows, tokens, memberships,
invitations and audit log; the dispatcher claims nothing of it afterwards, and
its public pages and badges are gone, cached or not. The personal team is an
ordinary team: once it is deleted, a session acts in another membership, or
in none.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error, monitor_body
from tests.notification_rows import add_notification
from uptime_server.engine.dispatcher import Dispatcher
from uptime_server.models import (
    AlertSettings,
    ApiToken,
    AuditEvent,
    Channel,
    CheckRun,
    Invitation,
    MaintenanceWindow,
    Membership,
    Monitor,
    MonitorLocation,
    Notification,
    StatusPage,
    Team,
)

OPS = {"X-Uptime-Team": "ops"}


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_RATE_LIMIT": "off"}


def fill(user: Any, header: dict[str, str], name: str, clock: Any) -> dict[str, Any]:
    """A monitor with a run, a notification and a badge; a channel, a page, a window, a token."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = user.post(path, json=body, headers=header)
        assert response.status_code == 201, response.get_json()
        return response.get_json()["data"]

    made = post("/api/v1/monitors", monitor_body(name=name, badges=True))
    monitor = user.get(f"/api/v1/monitors/{made['id']}", headers=header).get_json()["data"]
    CheckRun.create(monitor=monitor["id"], checked_at=clock.now(), status="online")
    add_notification(monitor["id"], user.user.id, clock.now(), "down")
    channel = post(
        "/api/v1/channels",
        {"name": name, "type": "webhook", "config": {"url": "https://example.com/h"}},
    )
    page = post(
        "/api/v1/status-pages",
        {
            "slug": f"{name}-page",
            "title": name,
            "groups": [{"heading": "All", "monitor_ids": [monitor["id"]]}],
        },
    )
    window = post("/api/v1/maintenance", {"title": name, "monitor_ids": [monitor["id"]]})
    token = post("/api/v1/tokens", {"name": name, "scope": "write"})
    return {
        "monitor": monitor,
        "channel": channel["id"],
        "page": page["slug"],
        "window": window["id"],
        "token": token,
    }


def test_deleting_a_team_deletes_its_data_and_stops_its_checks(
    app: Any, alice: Any, bob: Any, anon: Any, settings: Any, clock: Any
) -> None:
    made = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"}).get_json()["data"]
    ops = made["id"]
    Membership.create(team=ops, user=bob.user.id, role="admin", created_at=clock.now())
    doomed = fill(alice, OPS, "ops", clock)
    kept = fill(alice, {}, "mine", clock)
    Invitation.create(
        team=ops,
        email="x@example.com",
        role="member",
        token_hash=hashlib.sha256(b"t").hexdigest(),
        invited_by=alice.user.id,
        created_at=clock.now(),
        expires_at=clock.now() + timedelta(days=7),
    )
    assert AuditEvent.select().where(AuditEvent.team == ops).exists()
    # The public page and badge answer (and are cached) before.
    badge = f"/badge/{doomed['monitor']['badge_token']}/status.svg"
    for path in (f"/status/{doomed['page']}", f"/status/{doomed['page']}.json", badge):
        assert anon.get(path).status_code == 200, path
        assert anon.get(path).status_code == 200, path
    bearer = {"Authorization": f"Bearer {doomed['token']['token']}"}
    assert anon.get("/api/v1/monitors", headers=bearer).status_code == 200

    # Bob, an admin, can't; alice, the owner, can.
    assert_error(bob.delete("/api/v1/teams/ops"), 403, "FORBIDDEN")
    response = alice.delete("/api/v1/teams/ops")
    assert response.status_code == 200, response.get_json()

    monitor_id = doomed["monitor"]["id"]
    assert Team.get_or_none(Team.id == ops) is None
    for model, column in (
        (Monitor, Monitor.team),
        (Channel, Channel.team),
        (StatusPage, StatusPage.team),
        (MaintenanceWindow, MaintenanceWindow.team),
        (ApiToken, ApiToken.team),
        (Notification, Notification.team),
        (Membership, Membership.team),
        (Invitation, Invitation.team),
        (AuditEvent, AuditEvent.team),
    ):
        assert not model.select().where(column == ops).exists(), model.__name__
    for model, column in (
        (MonitorLocation, MonitorLocation.monitor),
        (CheckRun, CheckRun.monitor),
        (AlertSettings, AlertSettings.monitor),
        (Notification, Notification.monitor),
    ):
        assert not model.select().where(column == monitor_id).exists(), model.__name__
    # The dispatcher claims only what is left: the personal team's monitor.
    claims = Dispatcher(settings, worker_id="w").claim(clock.now() + timedelta(hours=1))
    assert [c.monitor_id for c in claims] == [kept["monitor"]["id"]]
    # Its public page and badge are gone, cached or not; the other team's stay.
    for path in (f"/status/{doomed['page']}", f"/status/{doomed['page']}.json", badge):
        assert anon.get(path).status_code == 404, path
    assert anon.get(f"/status/{kept['page']}").status_code == 200
    assert_error(anon.get("/api/v1/monitors", headers=bearer), 401, "UNAUTHORIZED")
    assert_error(alice.get("/api/v1/monitors", headers=OPS), 404, "TEAM_NOT_FOUND")
    assert_error(bob.get("/api/v1/teams/ops"), 404, "TEAM_NOT_FOUND")
    # The personal team is untouched.
    mine = alice.get("/api/v1/monitors").get_json()["data"]
    assert [m["id"] for m in mine] == [kept["monitor"]["id"]]
    assert [t["slug"] for t in alice.get("/api/v1/teams").get_json()["data"]] == ["alice"]


def test_after_the_personal_team_a_session_falls_back_then_finds_none(
    alice: Any, bob: Any, clock: Any
) -> None:
    # Bob's team "ops", alice a member of it.
    ops = bob.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"}).get_json()["data"]["id"]
    Membership.create(team=ops, user=alice.user.id, role="member", created_at=clock.now())
    user = alice.get("/api/v1/auth/user").get_json()["data"]
    assert (user["team"]["slug"], user["role"]) == ("alice", "owner")

    assert alice.delete("/api/v1/teams/alice").status_code == 200
    user = alice.get("/api/v1/auth/user").get_json()["data"]
    assert (user["team"]["id"], user["team"]["slug"], user["role"]) == (ops, "ops", "member")
    response = alice.post("/api/v1/monitors", json=monitor_body())
    assert response.status_code == 201
    assert response.get_json()["data"]["team_id"] == ops
    assert [t["slug"] for t in alice.get("/api/v1/teams").get_json()["data"]] == ["ops"]

    assert alice.delete(f"/api/v1/teams/ops/members/{alice.user.id}").status_code == 200
    for path in ("/api/v1/monitors", "/api/v1/channels", "/api/v1/notifications"):
        assert_error(alice.get(path), 404, "TEAM_NOT_FOUND")
    # Team-free endpoints still answer: she may list (none) and create a team.
    assert alice.get("/api/v1/teams").get_json()["data"] == []
    assert alice.post("/api/v1/teams", json={"name": "Again"}).status_code == 201
    assert alice.get("/api/v1/monitors").status_code == 200
