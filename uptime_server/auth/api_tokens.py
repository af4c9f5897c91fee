"""API tokens: bearer credentials for scripts and CI (docs/api.md#api-tokens).

Format. ``upt_`` + 30 base62 characters of randomness (178 bits) + a 6
character base62 CRC32 of them, as GitHub's tokens are built: the prefix lets
secret scanners recognise a leaked token, and the checksum lets them (and
us) tell a real token from a look-alike without asking the database.

At rest. Only the SHA-256 of the whole token is stored, under a unique
index: a request is one indexed lookup. The secret is high-entropy, so a
plain hash is enough (no salt, no slow KDF). ``prefix`` keeps the first
twelve characters for listings.

Use. ``Authorization: Bearer <token>`` on /api/v1. When a request carries a
bearer, its cookie is ignored: the bearer alone decides who calls, and an
invalid bearer is a 401 even next to a valid cookie. Revoked tokens are
deleted rows; expired ones stay listed until revoked.

Last used. ``last_used_at`` moves at most once a minute per token, by a
conditional UPDATE, so a burst of reads does not become a burst of writes
and two requests at once write it once.
"""

from __future__ import annotations

import binascii
import hashlib
import secrets
import string
from dataclasses import replace
from datetime import datetime, timedelta

from flask import Request, g
from peewee import JOIN

from uptime_server.auth.accounts import (
    ACCOUNT_COLUMNS,
    TEAM_COLUMNS,
    TOKEN_COLUMNS,
    Account,
    LiveToken,
    live_token,
)
from uptime_server.db import INT64_MAX, Prepared
from uptime_server.models import ApiToken, Membership, Team, User

TOKEN_PREFIX = "upt_"
_ALPHABET = string.digits + string.ascii_letters
_RANDOM_CHARS = 30
_CHECKSUM_CHARS = 6
TOKEN_LENGTH = len(TOKEN_PREFIX) + _RANDOM_CHARS + _CHECKSUM_CHARS
SHOWN_PREFIX = 12  # "upt_" and 8 random characters: enough to tell tokens apart
TOUCH_INTERVAL = timedelta(minutes=1)

# What each scope may call, by HTTP method; token management and sign-in take
# a session whatever the scope (access.session_only). A ping token reaches no
# API endpoint: heartbeat pings need no credential at all.
SCOPE_METHODS = {
    "read": frozenset({"GET"}),
    "write": frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"}),
    "admin": frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"}),
}


def hash_token(token: str) -> str:
    # The same digest as a session's (auth/sessions.py), kept here so that
    # sessions can load bearers without an import cycle.
    return hashlib.sha256(token.encode()).hexdigest()


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, digit = divmod(number, 62)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def _checksum(body: str) -> str:
    return _base62(binascii.crc32(body.encode()), _CHECKSUM_CHARS)


def new_token() -> str:
    body = "".join(secrets.choice(_ALPHABET) for _ in range(_RANDOM_CHARS))
    return f"{TOKEN_PREFIX}{body}{_checksum(body)}"


def well_formed(token: str) -> bool:
    """Prefix, length, alphabet and checksum are right: it may be one of ours."""
    if len(token) != TOKEN_LENGTH or not token.startswith(TOKEN_PREFIX):
        return False
    rest = token[len(TOKEN_PREFIX) :]
    if any(ch not in _ALPHABET for ch in rest):
        return False
    body, check = rest[:_RANDOM_CHARS], rest[_RANDOM_CHARS:]
    return secrets.compare_digest(check, _checksum(body))


def create_token(
    user: User | Account,
    *,
    team_id: int,
    name: str,
    scope: str,
    expires_in: int | None,
    now: datetime,
) -> tuple[str, ApiToken]:
    """Mint a token for *user* in *team_id*; return (secret, row). The secret is shown once."""
    token = new_token()
    expires_at = None if expires_in is None else now + timedelta(seconds=expires_in)
    row = ApiToken.create(
        user=user.id,
        team=team_id,
        name=name,
        scope=scope,
        token_hash=hash_token(token),
        prefix=token[:SHOWN_PREFIX],
        created_at=now,
        expires_at=expires_at,
    )
    return token, row


def list_tokens(team_id: int, user_id: int | None) -> list[ApiToken]:
    """The tokens of *team_id*: *user_id*'s only, or everyone's (None)."""
    where = ApiToken.team == team_id
    if user_id is not None:
        where &= ApiToken.user == user_id
    return list(ApiToken.select().where(where).order_by(ApiToken.id))


def revoke_token(team_id: int, user_id: int | None, token_id: int) -> ApiToken | None:
    """Delete token *token_id* of *team_id* (of *user_id* only, unless None); the row deleted."""
    if not 0 < token_id <= INT64_MAX:  # no such id, and SQLite could not bind it
        return None
    where = (ApiToken.id == token_id) & (ApiToken.team == team_id)
    if user_id is not None:
        where &= ApiToken.user == user_id
    row = ApiToken.get_or_none(where)
    if row is None or ApiToken.delete().where(ApiToken.id == row.id).execute() != 1:
        return None
    return row


class BearerRefused(Exception):
    """The bearer token is malformed, unknown (revoked) or expired."""


def authenticate(token: str, *, now: datetime) -> LiveToken:
    """The live token (with its account) for *token*, or BearerRefused saying why."""
    if not well_formed(token):
        raise BearerRefused("Not an uptime API token (expected upt_...)")
    found = _TOKEN.first(hash_token(token))
    if found is None:
        raise BearerRefused("Unknown or revoked API token")
    row = live_token(found)  # type: ignore[arg-type]
    if row.expires_at is not None and row.expires_at <= now:
        raise BearerRefused("API token expired; create a new one")
    if touch(row, now=now):
        row = replace(row, last_used_at=now)
    return row


# Every request with a bearer looks its token up: prepared once, and the
# token and its account read as one tuple.
_TOKEN = Prepared(
    lambda token_hash: (
        ApiToken.select(*TOKEN_COLUMNS, *ACCOUNT_COLUMNS, *TEAM_COLUMNS)
        .join(User)
        .join(
            Membership,
            JOIN.LEFT_OUTER,
            on=(Membership.team == ApiToken.team) & (Membership.user == ApiToken.user),
        )
        .join(Team, JOIN.LEFT_OUTER, on=(Team.id == Membership.team))
        .where(ApiToken.token_hash == token_hash)
        .limit(1)
        .tuples()
    )
)


def touch(row: LiveToken | ApiToken, *, now: datetime) -> bool:
    """Set last_used_at to *now* unless it moved within the last minute; True if written."""
    if row.last_used_at is not None and row.last_used_at > now - TOUCH_INTERVAL:
        # Decided on the row just read: no UPDATE at all, since even one that
        # matches nothing takes SQLite's write lock.
        return False
    stale = ApiToken.last_used_at.is_null() | (ApiToken.last_used_at <= now - TOUCH_INTERVAL)
    written = ApiToken.update(last_used_at=now).where(ApiToken.id == row.id, stale).execute()
    return written == 1


def bearer_token(req: Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header on an API path, else None.

    Only /api/ paths: /metrics has a bearer of its own (UPTIME_METRICS_TOKEN).
    """
    if not req.path.startswith("/api/"):
        return None
    scheme, _, credentials = req.headers.get("Authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credentials.strip()


def current_token() -> LiveToken | None:
    """The token this request authenticated with, if it used one."""
    return g.get("uptime_token")


def scope_refusal(scope: str, method: str) -> str | None:
    """Why a *scope* token may not make a *method* request, or None if it may."""
    if scope == "ping":
        return "A ping token is accepted only by heartbeat ping endpoints, not by the API"
    if method in ("HEAD", "OPTIONS"):
        method = "GET"
    if method in SCOPE_METHODS.get(scope, frozenset()):
        return None
    return f"A {scope} token cannot make {method} requests: create a write token"


def role_of_scope(scope: str) -> str | None:
    """The highest role a *scope* token acts with (ping: none)."""
    return {"read": "viewer", "write": "member", "admin": "admin"}.get(scope)
