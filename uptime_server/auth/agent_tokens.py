"""Agent tokens: one credential per probe agent, bound to one location.

Format. ``upa_`` + 43 URL-safe characters (256 random bits): the prefix tells
an agent token from an API token (``upt_``) at a glance, to secret scanners
and to the app's guard, which refuses each kind on the other's endpoints.

At rest. Only the SHA-256 of the token is stored, under a unique index;
``prefix`` keeps the first twelve characters for listings. The token is
shown once, when created. Revoking deletes the row: the agent's next call
gets 401 and its leases expire within one lease period. A token may be made
to expire (``expires_in``); an expired one is refused as a revoked one is,
and stays listed until revoked.

Who creates them. An agent runs the checks of every user's monitors in its
location, so its token is a server-wide credential: the local command
``uptime server agent-token --location L`` (which writes to the database
directly, like ``uptime server session``), or ``POST /api/v1/agents`` by an
admin, signed in (auth/admins.py).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from uptime_server.config import Settings
from uptime_server.db import INT64_MAX
from uptime_server.models import AgentToken

TOKEN_PREFIX = "upa_"
SHOWN_PREFIX = 12


class UnknownLocation(ValueError):
    """The location is not one of UPTIME_LOCATIONS."""


class AgentRefused(Exception):
    """The bearer is not a live agent token."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def is_agent_token(token: str | None) -> bool:
    return token is not None and token.startswith(TOKEN_PREFIX)


def create_agent(
    settings: Settings,
    *,
    location: str,
    name: str | None,
    now: datetime,
    expires_in: int | None = None,
) -> tuple[str, AgentToken]:
    """Mint an agent token for *location*, expiring after *expires_in* seconds
    (None: never); return (secret, row). The secret is shown once."""
    if location not in settings.locations:
        known = ", ".join(settings.locations)
        raise UnknownLocation(f"unknown location {location!r}: UPTIME_LOCATIONS has {known}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = AgentToken.create(
        location=location,
        name=name or f"{location}-agent",
        token_hash=hash_token(token),
        prefix=token[:SHOWN_PREFIX],
        created_at=now,
        expires_at=None if expires_in is None else now + timedelta(seconds=expires_in),
    )
    return token, row


def list_agents() -> list[AgentToken]:
    return list(AgentToken.select().order_by(AgentToken.id))


def revoke_agent(agent_id: int) -> bool:
    """Delete the agent token *agent_id*; False when there is none."""
    if not 0 < agent_id <= INT64_MAX:
        return False
    return AgentToken.delete().where(AgentToken.id == agent_id).execute() == 1


def authenticate(token: str, *, now: datetime) -> AgentToken:
    """The agent of *token*, or AgentRefused."""
    if not is_agent_token(token):
        raise AgentRefused("The agent API takes an agent token (upa_...)")
    row = AgentToken.get_or_none(AgentToken.token_hash == hash_token(token))
    if row is None:
        raise AgentRefused("Unknown or revoked agent token")
    if row.expires_at is not None and row.expires_at <= now:
        raise AgentRefused("Agent token expired; create a new one")
    return row
