"""Server-side sessions carried in the ``session_cookie`` cookie.

The cookie holds a random 256-bit token; the database keeps only its SHA-256,
so a leaked database does not leak live sessions. Flask-Login loads the user
from the cookie on each request (or from an API token, auth/api_tokens.py,
when the request carries a bearer); logout deletes the row, killing the cookie
everywhere.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from flask import Flask, Request, Response, g, request
from flask_login import LoginManager
from peewee import JOIN

from uptime_server.auth import api_tokens
from uptime_server.auth.accounts import (
    ACCOUNT_COLUMNS,
    SESSION_COLUMNS,
    TEAM_COLUMNS,
    Account,
    LiveSession,
    live_session,
)
from uptime_server.clock import Clock, utc
from uptime_server.config import Settings
from uptime_server.db import Prepared
from uptime_server.errors import ApiError
from uptime_server.models import Membership, Session, Team, User

COOKIE_NAME = "session_cookie"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_session(
    user: User, provider: str, *, now: datetime, ttl: int, max_age: int | None = None
) -> tuple[str, Session]:
    """Mint a new session for *user*; return (token, row). The token is shown once."""
    token = secrets.token_urlsafe(32)
    row = Session.create(
        user=user.id,
        token_hash=hash_token(token),
        provider=provider,
        created_at=now,
        expires_at=_expiry(now, now, ttl, max_age),
    )
    return token, row


def find_session(token: str, *, now: datetime, max_age: int | None = None) -> LiveSession | None:
    if not token or len(token) > 200:
        return None
    if max_age is None:
        row = _SESSION.first(hash_token(token), now)
    else:
        # Rows refreshed under a longer maximum age than today's end now too.
        row = _SESSION_OF_MAX_AGE.first(hash_token(token), now, now - timedelta(seconds=max_age))
    return None if row is None else live_session(row)  # type: ignore[arg-type]


def _session_query() -> Any:
    # With the role in the personal team: the usual request needs no other query.
    return (
        Session.select(*SESSION_COLUMNS, *ACCOUNT_COLUMNS, *TEAM_COLUMNS)
        .join(User)
        .join(
            Membership,
            JOIN.LEFT_OUTER,
            on=(Membership.team == User.personal_team) & (Membership.user == User.id),
        )
        .join(Team, JOIN.LEFT_OUTER, on=(Team.id == Membership.team))
    )


# Every API request looks its session up: the statements are prepared once,
# and the session and its account read as one tuple.
_SESSION = Prepared(
    lambda token_hash, now: (
        _session_query()
        .where(Session.token_hash == token_hash, Session.expires_at > now)
        .limit(1)
        .tuples()
    )
)
_SESSION_OF_MAX_AGE = Prepared(
    lambda token_hash, now, created_after: (
        _session_query()
        .where(
            Session.token_hash == token_hash,
            Session.expires_at > now,
            Session.created_at > created_after,
        )
        .limit(1)
        .tuples()
    )
)


def refresh_session(
    row: LiveSession | Session, *, now: datetime, ttl: int, max_age: int | None = None
) -> datetime:
    """Extend the session by *ttl*, never past *max_age* after it was created; the new end."""
    expires = _expiry(row.created_at, now, ttl, max_age)
    Session.update(expires_at=expires).where(Session.id == row.id).execute()
    return expires


def _expiry(created: datetime, now: datetime, ttl: int, max_age: int | None) -> datetime:
    expires = now + timedelta(seconds=ttl)
    if max_age is None:
        return expires
    # Refreshing slides the expiry, but a stolen cookie must die some day:
    # the absolute lifetime counts from sign-in.
    return min(expires, utc(created) + timedelta(seconds=max_age))


def revoke_session(row: LiveSession | Session) -> None:
    Session.delete().where(Session.id == row.id).execute()


def session_token(req: Request) -> str | None:
    return req.cookies.get(COOKIE_NAME) or None


def set_cookie(response: Response, token: str, expires: datetime) -> None:
    response.set_cookie(
        COOKIE_NAME,
        token,
        expires=expires,
        httponly=True,
        secure=True,
        samesite="Lax",
        path="/",
    )


def clear_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", secure=True, httponly=True, samesite="Lax")


def current_session() -> LiveSession | None:
    return g.get("uptime_session")


class RunningApp(Protocol):
    """What the request loader reads of the running app (``wsgi.context.AppState``),
    at each request: the daemon replaces the settings once it knows its address."""

    clock: Clock
    settings: Settings


def init_login(app: Flask, uptime: RunningApp) -> LoginManager:
    manager = LoginManager()
    manager.session_protection = None
    manager.init_app(app)

    @manager.request_loader
    def load_user(req: Request) -> Account | None:
        # A bearer wins over a cookie: the request is judged by its token alone.
        bearer = api_tokens.bearer_token(req)
        if bearer is not None:
            return _load_from_bearer(bearer, uptime.clock.now())
        return _load_from_cookie(req, uptime)

    @manager.unauthorized_handler
    def unauthorized() -> Response:
        raise ApiError("UNAUTHORIZED", "Sign in first: this endpoint needs a session")

    return manager


def _load_from_bearer(bearer: str, now: datetime) -> Account | None:
    try:
        row = api_tokens.authenticate(bearer, now=now)
    except api_tokens.BearerRefused as exc:
        g.uptime_bearer_refused = str(exc)
        return None
    g.uptime_token = row
    return row.account


def _load_from_cookie(req: Request, uptime: RunningApp) -> Account | None:
    token = session_token(req)
    if not token:
        return None
    row = find_session(token, now=uptime.clock.now(), max_age=uptime.settings.session_max_age)
    if row is None:
        return None
    g.uptime_session = row
    return row.account


def unauthenticated_error() -> ApiError:
    """The 401 of a request with no valid credential, saying what was wrong with its bearer."""
    refused = g.get("uptime_bearer_refused")
    if refused:
        return ApiError("UNAUTHORIZED", refused)
    return ApiError("UNAUTHORIZED", "Sign in first: this endpoint needs a session or an API token")


def check_csrf(base_url: str) -> None:
    """Refuse a cookie-authenticated unsafe request from a foreign origin.

    Browsers always send Origin (or at least Referer) on cross-site POSTs;
    scripts and the CLI send neither and pass. SameSite=Lax is the second wall.
    A request with a bearer token is exempt: its cookie is not what
    authenticates it, and a page cannot make a browser attach the header.
    """
    if request.method not in UNSAFE_METHODS or not session_token(request):
        return
    if api_tokens.bearer_token(request) is not None:
        return
    origin = request.headers.get("Origin")
    if origin is None:
        origin = request.headers.get("Referer")
        if origin is None:
            return
    # Both sides normalised: case of the host, default ports.
    if _origin_of(origin) != _origin_of(base_url):
        raise ApiError(
            "INSUFFICIENT_PERMISSIONS",
            "Cross-origin request refused: the Origin does not match this server",
        )


def same_origin(url: str, base_url: str) -> bool:
    """Whether *url* (an Origin or Referer) is of the site at *base_url*."""
    return _origin_of(url) == _origin_of(base_url) != "null"


def _origin_of(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # "http://[", "http://host:99999": no origin at all
        return "null"
    if not parts.scheme or not parts.hostname:
        return "null"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname
    if ":" in host:
        host = f"[{host}]"
    suffix = "" if port in (None, default) else f":{port}"
    return f"{parts.scheme}://{host}{suffix}"
