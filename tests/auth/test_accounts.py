"""A request's session or token and its account: one tuple read into frozen dataclasses."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from uptime_server.auth.accounts import Account, LiveSession, LiveToken
from uptime_server.auth.api_tokens import authenticate, create_token
from uptime_server.auth.sessions import create_session, find_session
from uptime_server.auth.teams import create_personal_team
from uptime_server.models import User


def _users(now: datetime) -> tuple[User, User]:
    alice = User.create(email="a@example.com", name="a", created_at=now, last_login=None)
    bob = User.create(
        email="b@example.com", name="b", created_at=now, last_login=now, is_admin=True
    )
    create_personal_team(alice, now=now)
    create_personal_team(bob, now=now)
    return alice, bob


def _account(user: User) -> Account:
    row = User.get_by_id(user.id)
    return Account(
        row.id,
        row.email,
        row.name,
        row.avatar_url,
        row.created_at,
        row.last_login,
        row.is_admin,
        row.personal_team_id,
    )


def test_a_session_comes_back_with_its_account(db: Any) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    alice, bob = _users(now)
    for user in (alice, bob, alice):  # each session finds its own user, twice over
        token, row = create_session(user, "local", now=now, ttl=3600)
        for _ in range(2):  # the first read works the layout out, the second reuses it
            found = find_session(token, now=now)
            assert isinstance(found, LiveSession)
            assert found == LiveSession(
                row.id,
                user.id,
                "local",
                now,
                now + timedelta(hours=1),
                _account(user),
                "owner",
                user.email[0],  # the personal team's slug: the address's local part
            )
            assert found.expires_at.tzinfo is UTC and found.account.created_at.tzinfo is UTC
            assert found.account.get_id() == str(user.id)
            assert found.account.is_authenticated and not found.account.is_anonymous
        assert find_session(token, now=now + timedelta(hours=1)) is None  # the bound time counts
        later = now + timedelta(seconds=61)
        assert find_session(token, now=later, max_age=60) is None  # older than max_age
        assert find_session(token, now=later, max_age=120) is not None
    assert find_session("nobody", now=now) is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.account.is_admin = True  # type: ignore[misc]


def test_a_token_comes_back_with_its_account(db: Any) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    _alice, bob = _users(now)
    team = bob.personal_team_id
    secret, row = create_token(bob, team_id=team, name="ci", scope="read", expires_in=None, now=now)
    found = authenticate(secret, now=now)
    assert isinstance(found, LiveToken)
    assert found == LiveToken(
        row.id, bob.id, team, "ci", "read", secret[:12], now, None, now, _account(bob), "owner", "b"
    )
    assert found.account.is_admin is True and found.account.last_login == now
