"""Limits per team: UPTIME_MAX_MONITORS_PER_TEAM (alias UPTIME_MAX_MONITORS_PER_USER)
caps a team's monitors whoever creates them; UPTIME_MAX_TEAMS_PER_USER caps the
teams one user belongs to (POST /teams: 403 QUOTA_EXCEEDED)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, monitor_body
from uptime_server.config import load_settings
from uptime_server.models import Membership, Team

URL = "/api/v1/monitors"
OPS = {"X-Uptime-Team": "ops"}


@pytest.fixture
def limits() -> dict[str, str]:
    return {"UPTIME_MAX_MONITORS_PER_TEAM": "3"}


@pytest.fixture
def settings_env(settings_env: dict[str, str], limits: dict[str, str]) -> dict[str, str]:
    return {**settings_env, **limits}


def test_the_per_user_name_is_an_alias_and_the_team_name_wins() -> None:
    base = {"UPTIME_SECRET_KEY": "k"}
    assert load_settings(base).max_monitors_per_team == 1000
    alias = load_settings({**base, "UPTIME_MAX_MONITORS_PER_USER": "5"})
    assert alias.max_monitors_per_team == 5
    both = {**base, "UPTIME_MAX_MONITORS_PER_USER": "5", "UPTIME_MAX_MONITORS_PER_TEAM": "9"}
    assert load_settings(both).max_monitors_per_team == 9
    assert load_settings(base).max_teams_per_user == 20


@pytest.mark.parametrize(
    "limits",
    [{"UPTIME_MAX_MONITORS_PER_TEAM": "3"}, {"UPTIME_MAX_MONITORS_PER_USER": "3"}],
    ids=["per-team", "per-user alias"],
)
def test_the_cap_counts_the_whole_team(
    alice: Any, bob: Any, clock: Any, limits: dict[str, str]
) -> None:
    ops = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"}).get_json()["data"]["id"]
    Membership.create(team=ops, user=bob.user.id, role="member", created_at=clock.now())
    for user, name in ((alice, "a1"), (bob, "b1"), (alice, "a2")):
        assert user.post(URL, json=monitor_body(name=name), headers=OPS).status_code == 201
    for user in (alice, bob):
        error = assert_error(
            user.post(URL, json=monitor_body(name="more"), headers=OPS), 403, "QUOTA_EXCEEDED"
        )
        assert "3" in error["message"]
    apply = {"monitors": [monitor_body(name=n) for n in ("a1", "b1", "a2", "more")]}
    assert_error(alice.post(f"{URL}/apply", json=apply, headers=OPS), 403, "QUOTA_EXCEEDED")
    assert alice.get(URL, headers=OPS).get_json()["pagination"]["total"] == 3
    # Each personal team has room of its own.
    assert alice.post(URL, json=monitor_body(name="mine")).status_code == 201
    assert bob.post(URL, json=monitor_body(name="mine")).status_code == 201


@pytest.mark.parametrize("limits", [{"UPTIME_MAX_TEAMS_PER_USER": "3"}])
def test_the_teams_per_user_cap(alice: Any, bob: Any, clock: Any) -> None:
    # The personal team counts: two more, then no more.
    for name in ("One", "Two"):
        assert alice.post("/api/v1/teams", json={"name": name}).status_code == 201
    error = assert_error(alice.post("/api/v1/teams", json={"name": "Three"}), 403, "QUOTA_EXCEEDED")
    assert "3" in error["message"]
    assert not Team.select().where(Team.name == "Three").exists()
    # Teams joined count too: bob is in his personal team and alice's "One".
    one = Team.get(Team.name == "One").id
    Membership.create(team=one, user=bob.user.id, role="viewer", created_at=clock.now())
    bobs = bob.post("/api/v1/teams", json={"name": "Bobs"}).get_json()["data"]["id"]
    assert_error(bob.post("/api/v1/teams", json={"name": "Bobs2"}), 403, "QUOTA_EXCEEDED")
    # Deleting one makes room.
    assert bob.delete(f"/api/v1/teams/{bobs}").status_code == 200
    assert bob.post("/api/v1/teams", json={"name": "Bobs2"}).status_code == 201
