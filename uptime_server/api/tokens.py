"""The API tokens resource: /api/v1/tokens (docs/api.md#api-tokens, docs/teams.md).

Every view here takes a signed-in session: a token cannot mint, list or
revoke tokens (``access.session_only``; the app's guard answers 403). A
token belongs to its creator within the request's team; any member may
mint one no stronger than their role, and admins list and revoke the team's.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.auth import api_tokens
from uptime_server.auth.teams import current_acting, require
from uptime_server.errors import ApiError
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.tokens import (
    Token,
    TokenCreate,
    TokenCreated,
    TokenList,
    parse_token_create,
)
from uptime_server.services import audit
from uptime_server.wsgi.access import requires, session_only
from uptime_server.wsgi.context import now
from uptime_server.wsgi.operations import documenter

bp = Blueprint("tokens", __name__, url_prefix="/tokens")
doc = documenter("tokens")


@bp.post("")
@session_only
@requires("viewer")
@doc("createToken", ok={201: data(TokenCreated)}, body=TokenCreate)
def create_token() -> Any:
    """Create an API token; the response shows its secret this once."""
    request = parse_token_create(json_body())
    acting = current_acting()
    needed = api_tokens.role_of_scope(request.scope) or "viewer"
    require(acting, needed, f"create a {request.scope} token")
    secret, row = api_tokens.create_token(
        current_user,
        team_id=acting.team_id,
        name=request.name,
        scope=request.scope,
        expires_in=request.expires_in,
        now=now(),
    )
    audit.record(
        acting, "token.create", "token", row.id, {"name": row.name, "scope": row.scope}, at=now()
    )
    return data_of(TokenCreated.from_row(row, token=secret)), 201


@bp.get("")
@session_only
@requires("viewer")
@doc("listTokens", ok=TokenList)
def list_tokens() -> Any:
    """List the caller's API tokens in the team (an admin: everyone's), never their secrets."""
    acting = current_acting()
    rows = api_tokens.list_tokens(
        acting.team_id, None if acting.allows("admin") else acting.user_id
    )
    return json_response(TokenList(data=[Token.of(row) for row in rows]))


@bp.delete("/<int:token_id>")
@session_only
@requires("viewer")
@doc("revokeToken", ok=Message, errors=(404,))
def revoke_token(token_id: int) -> Any:
    """Revoke an API token: it stops working at once."""
    acting = current_acting()
    mine = None if acting.allows("admin") else acting.user_id
    row = api_tokens.revoke_token(acting.team_id, mine, token_id)
    if row is None:
        raise ApiError("TOKEN_NOT_FOUND", "Token not found")
    audit.record(acting, "token.delete", "token", token_id, {"name": row.name}, at=now())
    return json_response(Message(message=f"Token {token_id} revoked"))
