"""Using an API token: expiry, last_used_at, CSRF, rate limits, owners, isolation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only
from tests.api.test_isolation import BODIES, monitor_routes
from tests.api.tokens import TOKENS, TokenUser, mint
from uptime_server.auth.api_tokens import authenticate, touch
from uptime_server.models import ApiToken, Monitor, Session, User

URL = "/api/v1/monitors"
EVIL = {"Origin": "http://evil.example"}


def last_used(alice: Any) -> str | None:
    return alice.get(TOKENS).get_json()["data"][0]["last_used_at"]


def test_it_expires_under_the_clock(alice: Any, clock: Any) -> None:
    token = mint(alice, "read", expires_in=3600)
    clock.advance(3599)
    assert token.get(URL).status_code == 200
    clock.advance(1)
    error = assert_error(token.get(URL), 401, "UNAUTHORIZED")
    assert "expired" in error["message"]
    # Still listed, with its expiry, until revoked.
    assert alice.get(TOKENS).get_json()["data"][0]["expires_at"] == "2026-11-22T13:00:00Z"


@sqlite_only
@pytest.mark.parametrize(
    "bearer",
    ["", "upt_", "not-a-token", "upt_" + "a" * 36, "x" * 500],
    ids=["empty", "prefix", "other", "bad-checksum", "oversized"],
)
def test_it_refuses_malformed_tokens(app: Any, bearer: str) -> None:
    client = app.test_client()
    response = client.get(URL, headers={"Authorization": f"Bearer {bearer}"})
    assert_error(response, 401, "UNAUTHORIZED")


@sqlite_only
def test_a_checksum_catches_a_changed_character(alice: Any) -> None:
    token = mint(alice, "read")
    last = token.token[-1]
    token.token = token.token[:-1] + ("A" if last != "A" else "B")
    error = assert_error(token.get(URL), 401, "UNAUTHORIZED")
    assert "Not an uptime API token" in error["message"]


def test_last_used_is_written_at_most_once_a_minute(alice: Any, clock: Any) -> None:
    token = mint(alice, "read")
    assert last_used(alice) is None
    token.get(URL)
    assert last_used(alice) == "2026-11-22T12:00:00Z"
    clock.advance(59)
    token.get(URL)
    assert last_used(alice) == "2026-11-22T12:00:00Z"
    clock.advance(1)
    token.get(URL)
    assert last_used(alice) == "2026-11-22T12:01:00Z"


def test_the_last_used_update_is_conditional(alice: Any, clock: Any) -> None:
    # Two requests that both read a stale last_used_at: only one writes.
    token = mint(alice, "read")
    first = authenticate(token.token, now=clock.now())
    second = ApiToken.get_by_id(first.id)
    second.last_used_at = None
    assert touch(second, now=clock.now()) is False
    clock.advance(60)
    assert touch(second, now=clock.now()) is True
    assert touch(first, now=clock.now()) is False


def test_a_recent_last_used_is_not_even_updated(alice: Any, clock: Any) -> None:
    # The row just read says "used within the minute": no UPDATE is sent
    # (on SQLite even an UPDATE matching nothing takes the write lock).
    token = mint(alice, "read")
    row = authenticate(token.token, now=clock.now())
    ApiToken.update(last_used_at=None).where(ApiToken.id == row.id).execute()
    clock.advance(30)
    assert touch(row, now=clock.now()) is False
    assert ApiToken.get_by_id(row.id).last_used_at is None


@sqlite_only
def test_bearer_requests_are_exempt_from_the_origin_rule(alice: Any) -> None:
    token = mint(alice, "write")
    assert token.post(URL, json=monitor_body(), headers=EVIL).status_code == 201
    # The same request carried by the cookie is still refused.
    refused = alice.post(URL, json=monitor_body(), headers=EVIL)
    assert_error(refused, 403, "INSUFFICIENT_PERMISSIONS")
    assert Monitor.select().count() == 1


@sqlite_only
def test_a_bearer_wins_over_a_cookie(alice: Any, bob: Any) -> None:
    token = mint(alice, "write")
    both = TokenUser(bob.client, token.token, alice.user)  # bob's cookie jar, alice's token
    response = both.post(URL, json=monitor_body(name="whose"), headers=EVIL)
    assert response.status_code == 201
    assert Monitor.get_by_id(response.get_json()["data"]["id"]).user_id == alice.user.id
    # A refused bearer is not rescued by a good cookie.
    both.token = "upt_" + "a" * 36
    assert_error(both.get(URL), 401, "UNAUTHORIZED")


@sqlite_only
def test_a_token_says_who_it_belongs_to(alice: Any) -> None:
    user = mint(alice, "read").get("/api/v1/auth/user").get_json()["data"]
    assert (user["email"], user["provider"]) == ("alice@example.com", None)


class TestRateLimit:
    pytestmark = sqlite_only

    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_RATE_LIMIT": "3/minute"}

    def test_each_token_has_its_own_budget(self, alice: Any) -> None:
        # Minting spends one request of the session's budget.
        first, second = mint(alice, "read"), mint(alice, "read")
        assert [first.get(URL).status_code for _ in range(4)] == [200, 200, 200, 429]
        response = second.get(URL)
        assert response.status_code == 200
        assert response.headers["X-RateLimit-Remaining"] == "2"
        assert alice.get(URL).status_code == 200  # the session's third request


def test_tokens_die_with_their_owner(alice: Any, bob: Any) -> None:
    mint(alice, "read")
    bobs = mint(bob, "read")
    User.delete().where(User.id == alice.user.id).execute()
    assert [t.user_id for t in ApiToken.select()] == [bob.user.id]
    assert bobs.get(URL).status_code == 200


def test_logout_ends_only_the_session(alice: Any) -> None:
    token = mint(alice, "read")
    assert alice.post("/api/v1/auth/logout").status_code == 200
    assert Session.select().count() == 0
    assert_error(alice.get(URL), 401, "UNAUTHORIZED")
    assert token.get(URL).status_code == 200


def test_a_token_never_reaches_another_users_monitors(app: Any, alice: Any, bob: Any) -> None:
    mid = create(alice, name="alice's")
    before = alice.get(f"{URL}/{mid}").get_json()["data"]
    bobs = mint(bob, "write")
    for method, rule in monitor_routes(app):
        path = rule.replace("<int:monitor_id>", str(mid))
        response = bobs.request(method, path, json=BODIES.get((method, rule), {}))
        assert_error(response, 404, "MONITOR_NOT_FOUND")
    assert bobs.get(URL).get_json()["data"] == []
    result = bobs.post(f"{URL}/bulk", json={"action": "delete", "monitor_ids": [mid]})
    assert result.get_json()["data"]["succeeded"] == []
    assert alice.get(f"{URL}/{mid}").get_json()["data"] == before
