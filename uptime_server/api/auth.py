"""Session endpoints: /api/v1/auth/user, /refresh, /logout.

The OAuth login/callback routes and the CLI exchange live in
``uptime_server.api.signin``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Blueprint, request
from flask_login import current_user

from uptime_server.auth import teams
from uptime_server.auth.sessions import (
    clear_cookie,
    current_session,
    refresh_session,
    revoke_session,
    session_token,
    set_cookie,
)
from uptime_server.errors import ApiError
from uptime_server.models import Team
from uptime_server.schemas.auth import Refreshed, User
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.wsgi.access import session_only, team_free
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import documenter

bp = Blueprint("auth", __name__, url_prefix="/auth")
doc = documenter("auth")


@bp.get("/user")
@team_free
@doc("getUser", ok=data(User))
def get_user() -> Any:
    """The signed-in user (provider null when called with an API token)."""
    session = current_session()
    try:
        acting = teams.for_request(request)
    except ApiError:
        if request.headers.get(teams.HEADER):
            raise  # the team asked for is not one of the caller's
        acting = None  # a member of no team (any more)
    team = None if acting is None else Team.get_by_id(acting.team_id)
    provider = session.provider if session else None
    role = None if acting is None else acting.role
    return data_of(User.of(current_user, provider, team, role))


@bp.post("/refresh")
@team_free
@session_only
@doc("refreshSession", ok=Refreshed)
def refresh() -> Any:
    """Extend the session."""
    row = current_session()
    config = settings()
    expires = refresh_session(
        row, now=now(), ttl=config.session_ttl, max_age=config.session_max_age
    )
    message = "Session refreshed"
    if expires < now() + timedelta(seconds=config.session_ttl):
        message = (
            "Session refreshed up to its maximum age (UPTIME_SESSION_MAX_AGE); "
            "sign in again before it expires"
        )
    response = json_response(Refreshed(message=message, expires_at=expires))
    set_cookie(response, session_token(request), expires)
    return response


@bp.post("/logout")
@team_free
@session_only
@doc("logout", ok=Message)
def logout() -> Any:
    """End the session everywhere."""
    revoke_session(current_session())
    response = json_response(Message(message="Logged out"))
    clear_cookie(response)
    return response
