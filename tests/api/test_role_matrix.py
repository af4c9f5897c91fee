"""Every API endpoint x every team role, read from the app's URL map.

Alice owns the team "ops"; bob joins it as viewer, member, admin, then owner,
and calls every endpoint that is neither public nor agent-only in that team
(``X-Uptime-Team: ops``, or the team in the path). He gets past authorisation
exactly when his role is at least the one the view declares
(``access.role_needed``), else 403 FORBIDDEN naming the role needed and his
own. Bodies are ``{}`` and ids are missing, so every request ends at
validation or 404: nothing is probed. An endpoint added later is held to the
table as soon as it is registered.

``DOCUMENTED`` then checks the declared roles of the key endpoints against the
issue's table (docs/teams.md), so the declarations are not only checked
against themselves.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from uptime_server.auth.teams import RANK
from uptime_server.models import ROLES, Membership
from uptime_server.wsgi.access import is_agent_only, is_public, is_team_free, role_needed

pytestmark = sqlite_only

MISSING = "999999"
# Routes whose declared role is not what a probe of a missing id takes.
PROBE_ROLE = {
    # Declared viewer: anyone may remove themselves (leave). The probe removes
    # another (missing) user, which takes admin (tests/api/test_team_rules.py
    # covers leaving).
    ("DELETE", "/api/v1/teams/<team>/members/<int:user_id>"): "admin",
}
# Deleting the team ends the matrix: the owner's pass deletes it.
LAST = ("DELETE", "/api/v1/teams/<team>")

# The table of roles, for the key endpoints (method, rule, least role).
DOCUMENTED = [
    # viewer: reads everything of the team
    ("GET", "/api/v1/monitors", "viewer"),
    ("GET", "/api/v1/monitors/<int:monitor_id>", "viewer"),
    ("GET", "/api/v1/monitors/<int:monitor_id>/history", "viewer"),
    ("GET", "/api/v1/monitors/<int:monitor_id>/stats", "viewer"),
    ("GET", "/api/v1/channels", "viewer"),
    ("GET", "/api/v1/channels/<int:channel_id>", "viewer"),
    ("GET", "/api/v1/status-pages", "viewer"),
    ("GET", "/api/v1/status-pages/<page>", "viewer"),
    ("GET", "/api/v1/maintenance", "viewer"),
    ("GET", "/api/v1/notifications", "viewer"),
    ("GET", "/api/v1/teams/<team>", "viewer"),
    ("GET", "/api/v1/teams/<team>/members", "viewer"),
    # member: monitors, windows, acknowledging, apply
    ("POST", "/api/v1/monitors", "member"),
    ("PUT", "/api/v1/monitors/<int:monitor_id>", "member"),
    ("DELETE", "/api/v1/monitors/<int:monitor_id>", "member"),
    ("POST", "/api/v1/monitors/<int:monitor_id>/pause", "member"),
    ("POST", "/api/v1/monitors/<int:monitor_id>/resume", "member"),
    ("POST", "/api/v1/monitors/<int:monitor_id>/test", "member"),
    ("POST", "/api/v1/monitors/apply", "member"),
    ("POST", "/api/v1/maintenance", "member"),
    ("PUT", "/api/v1/maintenance/<int:window_id>", "member"),
    ("DELETE", "/api/v1/maintenance/<int:window_id>", "member"),
    ("POST", "/api/v1/notifications/<int:notification_id>/acknowledge", "member"),
    ("POST", "/api/v1/notifications/<int:notification_id>/resolve", "member"),
    # admin: channels, status pages, members' roles
    ("POST", "/api/v1/channels", "admin"),
    ("PUT", "/api/v1/channels/<int:channel_id>", "admin"),
    ("DELETE", "/api/v1/channels/<int:channel_id>", "admin"),
    ("POST", "/api/v1/status-pages", "admin"),
    ("PUT", "/api/v1/status-pages/<page>", "admin"),
    ("DELETE", "/api/v1/status-pages/<page>", "admin"),
    ("PUT", "/api/v1/teams/<team>/members/<int:user_id>", "admin"),
    # owner: rename or delete the team
    ("PUT", "/api/v1/teams/<team>", "owner"),
    ("DELETE", "/api/v1/teams/<team>", "owner"),
]


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_RATE_LIMIT": "off", "UPTIME_LOGIN_RATE_LIMIT": "off"}


def rules(app: Any) -> list[tuple[str, str, Any]]:
    """(method, rule, view) of every API route that a team role may govern."""
    found = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        view = app.view_functions[rule.endpoint]
        if is_agent_only(view) or is_public(view):
            continue  # agent tokens only (tests/agents/test_agent_api.py), or no credential
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            found.append((method, rule.rule, view))
    return sorted(found, key=lambda route: (route[0], route[1]) == LAST)


def concrete(rule: str) -> str:
    """The path of *rule*: the team "ops", every other argument a missing id."""
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: "ops" if m[1] == "team" else MISSING, rule)


@pytest.fixture
def ops(alice: Any, bob: Any, clock: Any) -> int:
    """Alice's team "ops", with bob in it (as viewer until a test says otherwise)."""
    response = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"})
    assert response.status_code == 201, response.get_json()
    team_id = response.get_json()["data"]["id"]
    Membership.create(team=team_id, user=bob.user.id, role="viewer", created_at=clock.now())
    return team_id


def test_the_matrix_covers_the_teams_endpoints(app: Any) -> None:
    found = {(m, r) for m, r, _ in rules(app)}
    assert {(m, r) for m, r, _ in DOCUMENTED} <= found
    assert len(found) >= 50
    assert rules(app)[-1][:2] == LAST


def test_the_declared_roles_are_the_documented_ones(app: Any) -> None:
    declared = {(m, r): role_needed(v, m) for m, r, v in rules(app)}
    wrong = {
        (m, r): (declared[(m, r)], role) for m, r, role in DOCUMENTED if declared[(m, r)] != role
    }
    assert wrong == {}


def test_every_role_on_every_endpoint(app: Any, ops: int, bob: Any, make_user: Any) -> None:
    """Bob with each role, lowest first; the owner's pass ends by deleting the team."""
    allowed_somewhere: set[tuple[str, str]] = set()
    refused_somewhere: set[tuple[str, str]] = set()
    team_free_answers: dict[tuple[str, str], set[int]] = {}
    for role in ROLES:
        Membership.update(role=role).where(
            (Membership.team == ops) & (Membership.user == bob.user.id)
        ).execute()
        for method, rule, view in rules(app):
            path = concrete(rule)
            in_path = "<team>" in rule
            if is_team_free(view) and not in_path:
                # Acts in no team (sign-in, the list of teams, agents): the role
                # is irrelevant. A fresh session, as logout ends the one it uses.
                caller = make_user("bob@example.com")
                response = caller.request(method, path, json={}, headers={"X-Uptime-Team": "ops"})
                team_free_answers.setdefault((method, rule), set()).add(response.status_code)
                continue
            response = bob.request(method, path, json={}, headers={"X-Uptime-Team": "ops"})
            needed = PROBE_ROLE.get((method, rule), role_needed(view, method))
            where = (role, method, path, response.get_data(as_text=True)[:300])
            if RANK[role] >= RANK[needed]:
                allowed_somewhere.add((method, rule))
                assert response.status_code not in (401, 403), where
                assert response.status_code != 404 or (
                    response.get_json()["error"]["code"] != "TEAM_NOT_FOUND"
                ), where
            else:
                refused_somewhere.add((method, rule))
                error = assert_error(response, 403, "FORBIDDEN", "required_role")
                assert error["details"] == {
                    "required_role": [needed],
                    "current_role": [role],
                }, where
                assert needed in error["message"], where
    # The last request of the owner's pass deleted the team.
    assert bob.get("/api/v1/teams/ops").status_code == 404
    # Every team endpoint answered both ways, but viewer-only ones (nobody is refused).
    scoped = {(m, r) for m, r, v in rules(app) if not is_team_free(v) or "<team>" in r}
    assert allowed_somewhere == scoped
    viewer_level = {
        (m, r)
        for m, r, v in rules(app)
        if (m, r) in scoped and PROBE_ROLE.get((m, r), role_needed(v, m)) == "viewer"
    }
    assert refused_somewhere == scoped - viewer_level
    # Team-free endpoints answer each role alike.
    assert all(len(codes) == 1 for codes in team_free_answers.values()), team_free_answers


def test_a_member_lists_own_tokens_an_admin_every_one(
    app: Any, ops: int, alice: Any, bob: Any
) -> None:
    header = {"X-Uptime-Team": "ops"}
    Membership.update(role="member").where(Membership.user == bob.user.id).execute()
    mine = alice.post("/api/v1/tokens", json={"name": "alice's", "scope": "read"}, headers=header)
    assert mine.status_code == 201
    bobs = bob.post("/api/v1/tokens", json={"name": "bob's", "scope": "write"}, headers=header)
    assert bobs.status_code == 201
    listed = bob.get("/api/v1/tokens", headers=header).get_json()["data"]
    assert [t["name"] for t in listed] == ["bob's"]
    # A member can't revoke another's token: it is not found for him.
    alices_id = mine.get_json()["data"]["id"]
    assert_error(bob.delete(f"/api/v1/tokens/{alices_id}", headers=header), 404, "TOKEN_NOT_FOUND")
    Membership.update(role="admin").where(Membership.user == bob.user.id).execute()
    listed = bob.get("/api/v1/tokens", headers=header).get_json()["data"]
    assert sorted(t["name"] for t in listed) == ["alice's", "bob's"]
    assert {t["team_id"] for t in listed} == {ops}
    # A member can't mint a token above his role.
    Membership.update(role="member").where(Membership.user == bob.user.id).execute()
    error = assert_error(
        bob.post("/api/v1/tokens", json={"name": "x", "scope": "admin"}, headers=header),
        403,
        "FORBIDDEN",
    )
    assert error["details"] == {"required_role": ["admin"], "current_role": ["member"]}
