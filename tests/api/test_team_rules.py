"""The rules on members: leaving and removal end access at once, demotion caps
tokens, the last owner stays, admins don't touch owners (docs/teams.md).

Alice owns the team "ops"; bob and carol join it with the roles a test needs.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error, monitor_body
from uptime_server.models import ApiToken, Invitation, Membership

OPS = {"X-Uptime-Team": "ops"}
CHANNEL = {"name": "hook", "type": "webhook", "config": {"url": "https://example.com/h"}}


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_RATE_LIMIT": "off"}


@pytest.fixture
def ops(alice: Any) -> int:
    response = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]["id"]


def join(team_id: int, user: Any, role: str, clock: Any) -> None:
    Membership.create(team=team_id, user=user.user.id, role=role, created_at=clock.now())


def role_of(team_id: int, user: Any) -> str | None:
    row = Membership.get_or_none((Membership.team == team_id) & (Membership.user == user.user.id))
    return None if row is None else row.role


def bearer(user: Any, scope: str) -> tuple[Any, dict[str, str]]:
    """A test client and the headers of a new *scope* token of *user*'s in ops."""
    made = user.post("/api/v1/tokens", json={"name": scope, "scope": scope}, headers=OPS)
    assert made.status_code == 201, made.get_json()
    secret = made.get_json()["data"]["token"]
    return user.client.application.test_client(), {"Authorization": f"Bearer {secret}"}


def invitation(team_id: int, by: Any, clock: Any, *, accepted: bool = False) -> Invitation:
    token = f"token-{by.user.id}-{accepted}"
    return Invitation.create(
        team=team_id,
        email="friend@example.com",
        role="member",
        token_hash=hashlib.sha256(token.encode()).hexdigest(),
        invited_by=by.user.id,
        created_at=clock.now(),
        expires_at=clock.now() + timedelta(days=7),
        accepted_at=clock.now() if accepted else None,
        accepted_by=by.user.id if accepted else None,
    )


@pytest.mark.parametrize("how", ["removed", "leaves"])
def test_leaving_ends_access_at_once(alice: Any, bob: Any, ops: int, clock: Any, how: str) -> None:
    join(ops, bob, "admin", clock)
    client, token = bearer(bob, "write")
    assert client.get("/api/v1/monitors", headers=token).status_code == 200
    assert bob.get("/api/v1/monitors", headers=OPS).status_code == 200
    pending = invitation(ops, bob, clock)
    accepted = invitation(ops, bob, clock, accepted=True)
    # Bob's personal team keeps its own token.
    own_client, own = bob.client.application.test_client(), None
    made = bob.post("/api/v1/tokens", json={"name": "own", "scope": "read"}).get_json()["data"]
    own = {"Authorization": f"Bearer {made['token']}"}

    if how == "removed":
        response = alice.delete(f"/api/v1/teams/ops/members/{bob.user.id}")
        assert response.get_json()["message"] == f"User {bob.user.id} removed from the team"
    else:
        response = bob.delete(f"/api/v1/teams/ops/members/{bob.user.id}")
        assert response.get_json()["message"] == "You left the team"
    assert response.status_code == 200

    assert role_of(ops, bob) is None
    assert_error(bob.get("/api/v1/monitors", headers=OPS), 404, "TEAM_NOT_FOUND")
    assert_error(bob.get("/api/v1/teams/ops"), 404, "TEAM_NOT_FOUND")
    assert_error(client.get("/api/v1/monitors", headers=token), 401, "UNAUTHORIZED")
    assert not ApiToken.select().where((ApiToken.team == ops) & (ApiToken.user == bob.user.id))
    assert Invitation.get_or_none(Invitation.id == pending.id) is None
    assert Invitation.get_or_none(Invitation.id == accepted.id) is not None
    # The rest of bob's access is untouched.
    assert bob.get("/api/v1/monitors").status_code == 200
    assert own_client.get("/api/v1/monitors", headers=own).status_code == 200
    assert [t["slug"] for t in bob.get("/api/v1/teams").get_json()["data"]] == ["bob"]


def test_a_demotion_caps_a_token_at_once(alice: Any, bob: Any, ops: int, clock: Any) -> None:
    join(ops, bob, "admin", clock)
    client, token = bearer(bob, "admin")
    assert client.post("/api/v1/channels", json=CHANNEL, headers=token).status_code == 201
    assert (
        alice.put(f"/api/v1/teams/ops/members/{bob.user.id}", json={"role": "member"}).status_code
        == 200
    )
    error = assert_error(
        client.post("/api/v1/channels", json=CHANNEL, headers=token), 403, "FORBIDDEN"
    )
    assert error["details"] == {"required_role": ["admin"], "current_role": ["member"]}
    # What a member may do, the token still does.
    assert client.post("/api/v1/monitors", json=monitor_body(), headers=token).status_code == 201
    assert (
        alice.put(f"/api/v1/teams/ops/members/{bob.user.id}", json={"role": "viewer"}).status_code
        == 200
    )
    assert_error(
        client.post("/api/v1/monitors", json=monitor_body(), headers=token), 403, "FORBIDDEN"
    )
    assert client.get("/api/v1/monitors", headers=token).status_code == 200
    # And promoted again, it is back to its scope.
    assert (
        alice.put(f"/api/v1/teams/ops/members/{bob.user.id}", json={"role": "owner"}).status_code
        == 200
    )
    assert (
        client.post(
            "/api/v1/channels", json={**CHANNEL, "name": "again"}, headers=token
        ).status_code
        == 201
    )
    error = assert_error(
        client.put("/api/v1/teams/ops", json={"name": "x"}, headers=token), 403, "FORBIDDEN"
    )
    assert error["details"]["current_role"] == ["admin"]


def test_the_last_owner_stays(alice: Any, bob: Any, ops: int, clock: Any) -> None:
    join(ops, bob, "admin", clock)
    me = f"/api/v1/teams/ops/members/{alice.user.id}"
    assert_error(alice.delete(me), 409, "LAST_OWNER")
    assert_error(alice.put(me, json={"role": "admin"}), 409, "LAST_OWNER")
    assert role_of(ops, alice) == "owner"
    # An admin may not remove or demote the owner at all.
    assert_error(bob.delete(me), 403, "FORBIDDEN")
    assert_error(bob.put(me, json={"role": "viewer"}), 403, "FORBIDDEN")
    # With two owners, one may leave; then the other is the last.
    assert (
        alice.put(f"/api/v1/teams/ops/members/{bob.user.id}", json={"role": "owner"}).status_code
        == 200
    )
    assert alice.put(me, json={"role": "admin"}).status_code == 200
    assert alice.put(me, json={"role": "owner"}).status_code == 403  # an admin makes no owner
    assert bob.put(me, json={"role": "owner"}).status_code == 200
    assert alice.delete(me).status_code == 200
    bobs = f"/api/v1/teams/ops/members/{bob.user.id}"
    assert_error(bob.delete(bobs), 409, "LAST_OWNER")
    assert_error(bob.put(bobs, json={"role": "member"}), 409, "LAST_OWNER")
    assert role_of(ops, bob) == "owner"


def test_an_owner_removes_another_owner(alice: Any, bob: Any, ops: int, clock: Any) -> None:
    join(ops, bob, "owner", clock)
    assert alice.delete(f"/api/v1/teams/ops/members/{bob.user.id}").status_code == 200
    assert role_of(ops, bob) is None


def test_an_admin_manages_only_those_below_owner(
    alice: Any, bob: Any, make_user: Any, ops: int, clock: Any
) -> None:
    carol = make_user("carol@example.com", "Carol")
    join(ops, bob, "admin", clock)
    join(ops, carol, "viewer", clock)
    carols = f"/api/v1/teams/ops/members/{carol.user.id}"
    error = assert_error(bob.put(carols, json={"role": "owner"}), 403, "FORBIDDEN")
    assert error["details"] == {"required_role": ["owner"], "current_role": ["admin"]}
    assert role_of(ops, carol) == "viewer"
    shown = bob.put(carols, json={"role": "admin"})
    assert shown.status_code == 200
    assert shown.get_json()["data"] == {
        "user_id": carol.user.id,
        "name": "Carol",
        "email": "carol@example.com",
        "role": "admin",
        "joined_at": shown.get_json()["data"]["joined_at"],
    }
    assert bob.delete(carols).status_code == 200
    # A member or viewer removes nobody but themselves.
    join(ops, carol, "member", clock)
    bobs = f"/api/v1/teams/ops/members/{bob.user.id}"
    error = assert_error(carol.delete(bobs), 403, "FORBIDDEN")
    assert error["details"] == {"required_role": ["admin"], "current_role": ["member"]}
    assert_error(carol.put(bobs, json={"role": "viewer"}), 403, "FORBIDDEN")
    assert role_of(ops, bob) == "admin"
    # A missing member is 404.
    assert_error(
        bob.put("/api/v1/teams/ops/members/999999", json={"role": "viewer"}), 404, "NOT_FOUND"
    )


def test_an_admin_cannot_remove_an_owner_by_a_token(
    alice: Any, bob: Any, ops: int, clock: Any
) -> None:
    join(ops, bob, "admin", clock)
    client, token = bearer(bob, "admin")
    me = f"/api/v1/teams/ops/members/{alice.user.id}"
    assert_error(client.delete(me, headers=token), 403, "FORBIDDEN")
    assert role_of(ops, alice) == "owner"


@pytest.mark.parametrize("key", ["id", "slug"])
def test_a_personal_team_left_is_not_found_when_named(
    alice: Any, bob: Any, ops: int, clock: Any, key: str
) -> None:
    """Alice leaves her personal team (bob owns it too): naming it is 404, not another team."""
    personal = alice.user.personal_team_id
    join(personal, bob, "owner", clock)
    assert alice.delete(f"/api/v1/teams/alice/members/{alice.user.id}").status_code == 200
    named = {"X-Uptime-Team": str(personal) if key == "id" else "alice"}
    assert_error(alice.get("/api/v1/monitors", headers=named), 404, "TEAM_NOT_FOUND")
    assert_error(alice.get("/api/v1/auth/user", headers=named), 404, "TEAM_NOT_FOUND")
    # Without the header her session falls back to the team she is still in.
    me = alice.get("/api/v1/auth/user").get_json()["data"]
    assert (me["team"]["id"], me["role"]) == (ops, "owner")
