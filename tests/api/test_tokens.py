"""POST/GET/DELETE /api/v1/tokens: created once, listed without secrets, revoked."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.api.tokens import TOKENS, mint
from uptime_server.auth.api_tokens import TOKEN_LENGTH, well_formed
from uptime_server.models import ApiToken

LISTED = {
    "id",
    "team_id",
    "user_id",
    "name",
    "scope",
    "prefix",
    "created_at",
    "expires_at",
    "last_used_at",
}


def test_it_creates_a_token_shown_once(alice: Any, clock: Any) -> None:
    response = alice.post(TOKENS, json={"name": "ci", "scope": "read", "expires_in": 3600})
    assert response.status_code == 201
    created = response.get_json()["data"]
    assert set(created) == LISTED | {"token"}
    token = created["token"]
    assert token.startswith("upt_") and len(token) == TOKEN_LENGTH and well_formed(token)
    assert created["prefix"] == token[:12]
    assert (created["name"], created["scope"], created["last_used_at"]) == ("ci", "read", None)
    assert created["created_at"] == "2026-11-22T12:00:00Z"
    assert created["expires_at"] == "2026-11-22T13:00:00Z"
    # Only the hash is kept; the listing never shows the secret again.
    row = ApiToken.get_by_id(created["id"])
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in str(ApiToken.select().dicts()[:])
    listed = alice.get(TOKENS).get_json()["data"]
    assert listed == [{k: v for k, v in created.items() if k != "token"}]
    assert token not in alice.get(TOKENS).get_data(as_text=True)


@sqlite_only
def test_tokens_are_all_different(alice: Any) -> None:
    tokens = {mint(alice).token for _ in range(5)}
    assert len(tokens) == 5
    assert len({t[:12] for t in tokens}) == 5


def test_it_never_expires_a_token_without_expires_in(alice: Any, clock: Any) -> None:
    token = mint(alice, "read")
    assert alice.get(TOKENS).get_json()["data"][0]["expires_at"] is None
    clock.advance(timedelta(days=3650).total_seconds())
    assert token.get("/api/v1/monitors").status_code == 200


@sqlite_only
@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, ("name", "scope")),
        ({"name": "  ", "scope": "read"}, ("name",)),
        ({"name": "x" * 101, "scope": "read"}, ("name",)),
        ({"name": "a\nb", "scope": "read"}, ("name",)),
        ({"name": "ci", "scope": "owner"}, ("scope",)),
        ({"name": "ci", "scope": "read", "expires_in": 59}, ("expires_in",)),
        ({"name": "ci", "scope": "read", "expires_in": "90d"}, ("expires_in",)),
        ({"name": "ci", "scope": "read", "expires_in": 10**12}, ("expires_in",)),
        ({"name": "ci", "scope": "read", "owner": 2}, ("owner",)),
    ],
)
def test_it_validates_the_body(alice: Any, body: dict[str, Any], fields: tuple[str, ...]) -> None:
    assert_error(alice.post(TOKENS, json=body), 400, "VALIDATION_ERROR", *fields, only=True)
    assert ApiToken.select().count() == 0


def test_it_lists_only_own_tokens(alice: Any, bob: Any) -> None:
    mint(alice, "read")
    bobs = mint(bob, "write")
    listed = bob.get(TOKENS).get_json()
    assert set(listed) == {"data"}
    assert [t["scope"] for t in listed["data"]] == ["write"]
    assert listed["data"][0]["prefix"] == bobs.token[:12]


def test_it_revokes_a_token(alice: Any) -> None:
    token = mint(alice, "read")
    assert token.get("/api/v1/monitors").status_code == 200
    token_id = alice.get(TOKENS).get_json()["data"][0]["id"]

    response = alice.delete(f"{TOKENS}/{token_id}")

    assert response.status_code == 200
    assert response.get_json() == {"message": f"Token {token_id} revoked"}
    error = assert_error(token.get("/api/v1/monitors"), 401, "UNAUTHORIZED")
    assert "revoked" in error["message"]
    assert alice.get(TOKENS).get_json()["data"] == []
    assert_error(alice.delete(f"{TOKENS}/{token_id}"), 404, "TOKEN_NOT_FOUND")


@pytest.mark.parametrize("token_id", [999, 2**63, 2**70])
def test_it_answers_404_for_unknown_ids(alice: Any, token_id: int) -> None:
    assert_error(alice.delete(f"{TOKENS}/{token_id}"), 404, "TOKEN_NOT_FOUND")


def test_it_does_not_revoke_another_users_token(alice: Any, bob: Any) -> None:
    alices = mint(alice, "read")
    token_id = alice.get(TOKENS).get_json()["data"][0]["id"]
    assert_error(bob.delete(f"{TOKENS}/{token_id}"), 404, "TOKEN_NOT_FOUND")
    assert alices.get("/api/v1/monitors").status_code == 200


@sqlite_only
@pytest.mark.parametrize("scope", ["read", "write", "ping"])
def test_a_token_cannot_manage_tokens(alice: Any, scope: str) -> None:
    token = mint(alice, scope)
    token_id = alice.get(TOKENS).get_json()["data"][0]["id"]
    for method, path, body in (
        ("POST", TOKENS, {"name": "more", "scope": "write"}),
        ("GET", TOKENS, None),
        ("DELETE", f"{TOKENS}/{token_id}", None),
    ):
        error = assert_error(token.request(method, path, json=body), 403, "FORBIDDEN")
        assert "session" in error["message"], error
    assert ApiToken.select().count() == 1
