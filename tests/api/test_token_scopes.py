"""Every scope on every API endpoint, read from the app's URL map.

A token acts as its scope's role at most (read: viewer, write: member,
admin: admin; docs/teams.md), so read reaches every GET, write what a member
may do, admin what an admin may; none manages tokens or signs in, and ping
reaches no API endpoint (heartbeat pings need no credential). The role each
endpoint takes is the one its view declares (``access.role_needed``).
Endpoints added later are held to the same table as soon as they are registered.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.api.test_auth_required import api_routes
from tests.api.tokens import mint
from uptime_server.auth.teams import RANK, SCOPE_ROLE
from uptime_server.wsgi.access import is_agent_only, is_session_only, role_needed

pytestmark = sqlite_only

# The sign-in and session endpoints a token never reaches, whatever its scope.
SESSION_ONLY = {
    ("GET", "/api/v1/auth/github/login"),
    ("GET", "/api/v1/auth/github/callback"),
    ("POST", "/api/v1/auth/cli/exchange"),
    ("POST", "/api/v1/auth/refresh"),
    ("POST", "/api/v1/auth/logout"),
    ("GET", "/api/v1/tokens"),
    ("POST", "/api/v1/tokens"),
    ("DELETE", "/api/v1/tokens/1"),
    ("POST", "/api/v1/agents"),
    ("DELETE", "/api/v1/agents/1"),
    ("POST", "/api/v1/teams"),
    ("POST", "/api/v1/invitations/accept"),  # joins the person, not a token
}


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    # A provider, so its login is a real endpoint a bearer is refused at.
    return {
        **settings_env,
        "UPTIME_OAUTH_GITHUB_CLIENT_ID": "gh-client",
        "UPTIME_OAUTH_GITHUB_CLIENT_SECRET": "gh-secret",
        "UPTIME_RATE_LIMIT": "off",
        "UPTIME_LOGIN_RATE_LIMIT": "off",
        # Agent management takes an admin (tests/agents covers who may).
        "UPTIME_ADMINS": "alice@example.com",
    }


def routes(app: Any) -> list[tuple[str, str, bool, str]]:
    """(method, path, session only, role needed) of every API route; public ones only if
    session only."""
    found = []
    for public in (False, True):
        for method, path, endpoint in api_routes(app, public=public):
            if is_agent_only(app.view_functions[endpoint]):
                continue  # agent tokens only: tests/agents/test_agent_api.py
            only = is_session_only(app.view_functions[endpoint])
            if public and not only:
                continue  # the API document: no credential involved
            needed = role_needed(app.view_functions[endpoint], method)
            found.append((method, path, only, needed))
    return found


def expected(scope: str, method: str, session_only: bool, needed: str) -> bool:
    """Whether a *scope* token of an owner gets past authorisation on this route."""
    if session_only or scope == "ping":
        return False
    if scope == "read" and method != "GET":
        return False
    return RANK[SCOPE_ROLE[scope]] >= RANK[needed]


def test_the_table_knows_the_session_only_routes(app: Any) -> None:
    table = routes(app)
    assert {(m, p) for m, p, only, _ in table if only} == SESSION_ONLY
    assert len(table) >= 25


@pytest.mark.parametrize("scope", ["read", "write", "admin", "ping"])
def test_each_scope_on_every_endpoint(app: Any, alice: Any, scope: str) -> None:
    token = mint(alice, scope)
    checked = {True: 0, False: 0}
    for method, path, session_only, needed in routes(app):
        # No monitor or notification exists: writes end at validation or 404,
        # nothing is probed.
        response = token.request(method, path, json={})
        allowed = expected(scope, method, session_only, needed)
        checked[allowed] += 1
        if allowed:
            assert response.status_code not in (401, 403), (method, path, response.get_json())
        else:
            error = assert_error(response, 403, "FORBIDDEN")
            assert error["message"], (method, path)
    if scope == "ping":
        assert checked[True] == 0
    else:
        assert checked[True] > 0 and checked[False] > 0


def test_a_read_token_is_told_why(alice: Any) -> None:
    token = mint(alice, "read")
    error = assert_error(token.post("/api/v1/monitors", json={}), 403, "FORBIDDEN")
    assert error["message"] == "A read token cannot make POST requests: create a write token"


def test_a_ping_token_is_told_why(alice: Any) -> None:
    token = mint(alice, "ping")
    error = assert_error(token.get("/api/v1/monitors"), 403, "FORBIDDEN")
    assert "heartbeat ping" in error["message"]
