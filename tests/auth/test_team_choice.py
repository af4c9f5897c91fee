"""Which team a request acts in: X-Uptime-Team by id or slug, else the default (docs/teams.md)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.api.tokens import mint
from uptime_server.models import Membership, Team

USER = "/api/v1/auth/user"


@pytest.fixture
def ops(alice: Any, bob: Any, clock: Any) -> Team:
    """Alice's team "ops", bob a viewer in it."""
    response = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"})
    assert response.status_code == 201, response.get_json()
    team = Team.get(Team.slug == "ops")
    Membership.create(team=team.id, user=bob.user.id, role="viewer", created_at=clock.now())
    return team


def acting(client: Any, header: str | None = None) -> Any:
    headers = {} if header is None else {"X-Uptime-Team": header}
    return client.get(USER, headers=headers)


def test_a_session_acts_in_its_personal_team_by_default(alice: Any) -> None:
    data = acting(alice).get_json()["data"]
    assert data["team"]["id"] == alice.user.personal_team_id
    assert (data["team"]["slug"], data["role"]) == ("alice", "owner")


@pytest.mark.parametrize("by", ["id", "slug", "slug with spaces"])
def test_the_header_names_a_team_by_id_or_slug(bob: Any, ops: Team, by: str) -> None:
    key = {"id": str(ops.id), "slug": "ops", "slug with spaces": "  ops "}[by]
    data = acting(bob, key).get_json()["data"]
    assert (data["team"]["id"], data["role"]) == (ops.id, "viewer")
    # the personal team by its own slug too (read with the session itself)
    assert acting(bob, "bob").get_json()["data"]["team"]["slug"] == "bob"


@pytest.mark.parametrize("key", ["ops", "999999", "nope", "0", "x" * 65, "99999999999999999999"])
def test_a_team_you_are_not_in_is_not_found(
    alice: Any, make_user: Any, ops: Team, key: str
) -> None:
    carol = make_user("carol@example.com", "Carol")
    error = assert_error(acting(carol, key), 404, "TEAM_NOT_FOUND")
    assert error["message"] == "Team not found"
    answer = carol.get("/api/v1/monitors", headers={"X-Uptime-Team": key})
    missing = assert_error(answer, 404, "TEAM_NOT_FOUND")
    assert missing == error  # an existing team and a missing one answer alike


def test_a_token_acts_in_its_own_team_only(alice: Any, bob: Any, ops: Team) -> None:
    token = mint(bob, "read")  # made in bob's personal team
    assert acting(token).get_json()["data"]["team"]["slug"] == "bob"
    assert acting(token, "bob").status_code == 200
    assert_error(
        token.get("/api/v1/monitors", headers={"X-Uptime-Team": "ops"}), 404, "TEAM_NOT_FOUND"
    )


def test_a_token_is_capped_by_its_users_role(alice: Any, bob: Any, ops: Team) -> None:
    Membership.update(role="admin").where(
        (Membership.team == ops.id) & (Membership.user == bob.user.id)
    ).execute()
    response = bob.post(
        "/api/v1/tokens", json={"name": "ci", "scope": "admin"}, headers={"X-Uptime-Team": "ops"}
    )
    assert response.status_code == 201, response.get_json()
    token = mint(bob, "admin", team="ops")
    assert acting(token).get_json()["data"]["role"] == "admin"
    Membership.update(role="viewer").where(
        (Membership.team == ops.id) & (Membership.user == bob.user.id)
    ).execute()
    assert acting(token).get_json()["data"]["role"] == "viewer"  # demoted: capped at once
    error = assert_error(token.post("/api/v1/monitors", json={}), 403, "FORBIDDEN")
    assert error["details"] == {"required_role": ["member"], "current_role": ["viewer"]}
    Membership.delete().where(
        (Membership.team == ops.id) & (Membership.user == bob.user.id)
    ).execute()
    assert_error(acting(token), 401, "UNAUTHORIZED")  # no longer a member: it stops working


def test_a_scope_above_the_role_is_refused(bob: Any, ops: Team) -> None:
    response = bob.post(
        "/api/v1/tokens", json={"name": "ci", "scope": "write"}, headers={"X-Uptime-Team": "ops"}
    )
    error = assert_error(response, 403, "FORBIDDEN")
    assert error["details"]["required_role"] == ["member"]
    ok = bob.post(
        "/api/v1/tokens", json={"name": "ci", "scope": "read"}, headers={"X-Uptime-Team": "ops"}
    )
    assert ok.status_code == 201 and ok.get_json()["data"]["team_id"] == ops.id


def test_without_its_personal_team_a_session_falls_back_to_another(
    alice: Any, bob: Any, ops: Team
) -> None:
    Membership.delete().where(
        (Membership.team == bob.user.personal_team_id) & (Membership.user == bob.user.id)
    ).execute()
    assert acting(bob).get_json()["data"]["team"]["slug"] == "ops"
    Membership.delete().where(Membership.user == bob.user.id).execute()
    assert acting(bob).get_json()["data"]["team"] is None
    error = assert_error(bob.get("/api/v1/monitors"), 404, "TEAM_NOT_FOUND")
    assert "no team" in error["message"]


def test_a_slug_has_a_letter_so_it_never_reads_as_an_id(alice: Any) -> None:
    error = assert_error(
        alice.post("/api/v1/teams", json={"name": "Year", "slug": "2024"}), 400, "VALIDATION_ERROR"
    )
    assert "slug" in error["details"]
    made = alice.post("/api/v1/teams", json={"name": "2024"}).get_json()["data"]
    assert made["slug"] == "team-2024"
    assert alice.get("/api/v1/teams/team-2024").get_json()["data"]["id"] == made["id"]


def test_the_header_is_case_blind_for_a_token_too(alice: Any) -> None:
    token = mint(alice, "read")
    assert acting(token, "ALICE").get_json()["data"]["team"]["slug"] == "alice"
    assert acting(alice, "Alice").get_json()["data"]["team"]["slug"] == "alice"
