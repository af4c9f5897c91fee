"""GET /auth/user, POST /auth/refresh, POST /auth/logout and session lifetime."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from http.cookies import SimpleCookie
from typing import Any

from tests.api.shapes import assert_error
from tests.conftest import ApiUser
from uptime_server.auth.local_users import mint_local_session
from uptime_server.models import Session

TTL = timedelta(days=14)


def _cookie(response: Any) -> Any:
    jar: SimpleCookie = SimpleCookie()
    for header in response.headers.getlist("Set-Cookie"):
        jar.load(header)
    return jar["session_cookie"]


def test_it_shows_the_signed_in_user(alice: Any, bob: Any) -> None:
    response = alice.get("/api/v1/auth/user")
    assert response.status_code == 200
    assert response.get_json()["data"] == {
        "id": alice.user.id,
        "email": "alice@example.com",
        "name": "Alice",
        "provider": "local",
        "avatar_url": None,
        "created_at": "2026-11-22T12:00:00Z",
        "last_login": "2026-11-22T12:00:00Z",
        "is_admin": False,
        "team": {"id": alice.user.personal_team_id, "name": "Alice", "slug": "alice"},
        "role": "owner",
    }
    assert bob.get("/api/v1/auth/user").get_json()["data"]["email"] == "bob@example.com"


def test_it_stores_only_the_token_hash(alice: Any) -> None:
    row = Session.get(Session.user == alice.user.id)
    assert row.token_hash == hashlib.sha256(alice.token.encode()).hexdigest()
    assert alice.token not in {r.token_hash for r in Session.select()}
    assert len(alice.token) >= 43  # 256 bits, URL-safe base64


def test_it_logs_out_everywhere(app: Any, alice: Any, settings: Any, clock: Any) -> None:
    other_device = ApiUser(app.test_client(), alice.token, alice.user)
    second_token = mint_local_session(settings, email="alice@example.com", clock=clock)
    second_session = ApiUser(app.test_client(), second_token, alice.user)
    response = alice.post("/api/v1/auth/logout")
    assert response.status_code == 200
    assert response.get_json() == {"message": "Logged out"}
    cleared = _cookie(response)
    assert cleared.value == "" and cleared["max-age"] == "0"
    # The old token is dead for every client that holds it, on every endpoint.
    for user in (alice, other_device):
        user.client.set_cookie("session_cookie", alice.token)
        assert_error(user.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")
        assert_error(user.get("/api/v1/monitors"), 401, "UNAUTHORIZED")
        assert_error(user.post("/api/v1/auth/refresh"), 401, "UNAUTHORIZED")
        assert_error(user.post("/api/v1/auth/logout"), 401, "UNAUTHORIZED")
    # Another session of the same user is untouched.
    assert second_session.get("/api/v1/auth/user").status_code == 200


def test_it_refuses_expired_sessions(alice: Any, clock: Any) -> None:
    clock.advance(seconds=TTL.total_seconds() - 1)
    assert alice.get("/api/v1/auth/user").status_code == 200
    clock.advance(seconds=1)
    assert_error(alice.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")
    assert_error(alice.post("/api/v1/auth/refresh"), 401, "UNAUTHORIZED")


def test_it_refreshes_the_session(alice: Any, clock: Any) -> None:
    clock.advance(days=10)
    response = alice.post("/api/v1/auth/refresh")
    assert response.status_code == 200
    new_expiry = clock.now() + TTL
    assert response.get_json() == {
        "message": "Session refreshed",
        "expires_at": new_expiry.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert Session.get(Session.user == alice.user.id).expires_at == new_expiry
    cookie = _cookie(response)
    assert cookie.value == alice.token
    assert cookie["httponly"] and cookie["secure"]
    assert (cookie["samesite"], cookie["path"]) == ("Lax", "/")
    # Past the first expiry, the refreshed session lives on until the new one.
    clock.advance(days=5)
    assert alice.get("/api/v1/monitors").status_code == 200
    clock.set(new_expiry)
    assert_error(alice.get("/api/v1/monitors"), 401, "UNAUTHORIZED")
