"""Session endpoints: /api/v1/auth/user, /refresh, /logout.

The OAuth login/callback routes and the CLI exchange live in
``uptime_server.api.signin``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Blueprint, jsonify, request
from flask_login import current_user

from uptime_server.auth.sessions import (
    clear_cookie,
    current_session,
    refresh_session,
    revoke_session,
    session_token,
    set_cookie,
)
from uptime_server.clock import isoformat
from uptime_server.context import now, settings
from uptime_server.models import User

bp = Blueprint("auth", __name__, url_prefix="/auth")


def user_json(user: User, provider: str | None) -> dict[str, Any]:
    return {
        "id": user.id,
        "email": user.email,
        "name": user.name,
        "provider": provider,
        "avatar_url": user.avatar_url,
        "created_at": isoformat(user.created_at),
        "last_login": isoformat(user.last_login),
    }


@bp.get("/user")
def get_user() -> Any:
    return {"data": user_json(current_user, current_session().provider)}


@bp.post("/refresh")
def refresh() -> Any:
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
    response = jsonify({"message": message, "expires_at": isoformat(expires)})
    set_cookie(response, session_token(request), expires)
    return response


@bp.post("/logout")
def logout() -> Any:
    revoke_session(current_session())
    response = jsonify({"message": "Logged out"})
    clear_cookie(response)
    return response
