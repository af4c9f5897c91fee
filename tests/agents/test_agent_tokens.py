"""Managing agent tokens: admins by the flag, signed in; tokens that expire (issue 29, 3 and 9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.api.tokens import mint
from uptime_server import db
from uptime_server.auth import admins
from uptime_server.clock import isoformat
from uptime_server.models import AgentToken, User
from uptime_server.schemas.tokens import MAX_EXPIRES_IN, MIN_EXPIRES_IN

AGENTS = "/api/v1/agents"


def _claims(client: Any, token: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    return client.post("/api/v1/agent/claims", json={}, headers=headers)


def test_admin_is_the_flag_not_the_address(alice, bob, make_user):
    """alice@example.com is in UPTIME_ADMINS (tests/agents/conftest.py)."""
    assert alice.get("/api/v1/auth/user").get_json()["data"]["is_admin"] is True
    # A second account with alice's address (as sign-up made them before):
    # listed by address, but no flag.
    with db.database.connection_context():
        twin = User.create(email="ALICE@example.com", name="twin", created_at=datetime.now(UTC))
    twin_session = make_user("ALICE@example.com")
    assert twin_session.user.id == twin.id
    assert twin_session.get("/api/v1/auth/user").get_json()["data"]["is_admin"] is False
    assert_error(twin_session.get(AGENTS), 403, "FORBIDDEN")
    assert_error(twin_session.post(AGENTS, json={"location": "eu-west"}), 403, "FORBIDDEN")

    # Bob is listed nowhere; the flag alone lets him in, and taking it away shuts him out.
    assert_error(bob.get(AGENTS), 403, "FORBIDDEN")
    with db.database.connection_context():
        admins.set_admin(bob.user, True)
    assert bob.get(AGENTS).status_code == 200
    with db.database.connection_context():
        admins.set_admin(alice.user, False)
    assert_error(alice.get(AGENTS), 403, "FORBIDDEN")


@pytest.mark.parametrize("scope", ["write", "read"])
def test_tokens_do_not_mint_nor_revoke_agent_tokens(alice, scope):
    created = alice.post(AGENTS, json={"location": "eu-west"}).get_json()["data"]
    token = mint(alice, scope)

    minted = token.post(AGENTS, json={"location": "eu-west"})
    revoked = token.delete(f"{AGENTS}/{created['id']}")

    assert "session" in assert_error(minted, 403, "FORBIDDEN")["message"]
    assert_error(revoked, 403, "FORBIDDEN")
    with db.database.connection_context():
        assert [a.id for a in AgentToken.select()] == [created["id"]]
    # Listing takes a token too, as any read does.
    assert [a["id"] for a in token.get(AGENTS).get_json()["data"]] == [created["id"]]


def test_an_agent_token_may_expire(alice, anon, clock):
    created = alice.post(AGENTS, json={"location": "eu-west", "expires_in": 3600})
    assert created.status_code == 201, created.get_json()
    agent = created.get_json()["data"]
    assert agent["expires_at"] == isoformat(clock.now() + timedelta(seconds=3600))
    assert alice.get(AGENTS).get_json()["data"][0]["expires_at"] == agent["expires_at"]
    forever = alice.post(AGENTS, json={"location": "eu-west"}).get_json()["data"]
    assert forever["expires_at"] is None

    assert _claims(anon, agent["token"]).status_code == 200
    clock.advance(3600)
    expired = _claims(anon, agent["token"])
    assert "expired" in assert_error(expired, 401, "UNAUTHORIZED")["message"]
    assert _claims(anon, forever["token"]).status_code == 200
    # Still listed, until revoked.
    assert len(alice.get(AGENTS).get_json()["data"]) == 2


@pytest.mark.parametrize(
    "expires_in", [MIN_EXPIRES_IN - 1, MAX_EXPIRES_IN + 1, 0, -5, "3600", 1.5, True]
)
def test_expires_in_is_validated(alice, expires_in):
    r = alice.post(AGENTS, json={"location": "eu-west", "expires_in": expires_in})
    error = assert_error(r, 400, "VALIDATION_ERROR", "expires_in", only=True)
    assert f"from {MIN_EXPIRES_IN} to {MAX_EXPIRES_IN}" in error["details"]["expires_in"][0]
    with db.database.connection_context():
        assert AgentToken.select().count() == 0
