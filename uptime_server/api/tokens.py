"""The API tokens resource: /api/v1/tokens (docs/api.md#api-tokens).

Every view here takes a signed-in session: a token cannot mint, list or
revoke tokens (``access.session_only``; the app's guard answers 403).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.auth import api_tokens
from uptime_server.errors import ApiError
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.tokens import (
    Token,
    TokenCreate,
    TokenCreated,
    TokenList,
    parse_token_create,
)
from uptime_server.wsgi.access import session_only
from uptime_server.wsgi.context import now
from uptime_server.wsgi.operations import documenter

bp = Blueprint("tokens", __name__, url_prefix="/tokens")
doc = documenter("tokens")


@bp.post("")
@session_only
@doc("createToken", ok={201: data(TokenCreated)}, body=TokenCreate)
def create_token() -> Any:
    """Create an API token; the response shows its secret this once."""
    request = parse_token_create(json_body())
    secret, row = api_tokens.create_token(
        current_user,
        name=request.name,
        scope=request.scope,
        expires_in=request.expires_in,
        now=now(),
    )
    return data_of(TokenCreated.from_row(row, token=secret)), 201


@bp.get("")
@session_only
@doc("listTokens", ok=TokenList)
def list_tokens() -> Any:
    """List the caller's API tokens (never their secrets)."""
    rows = api_tokens.list_tokens(current_user)
    return json_response(TokenList(data=[Token.of(row) for row in rows]))


@bp.delete("/<int:token_id>")
@session_only
@doc("revokeToken", ok=Message, errors=(404,))
def revoke_token(token_id: int) -> Any:
    """Revoke an API token: it stops working at once."""
    if not api_tokens.revoke_token(current_user, token_id):
        raise ApiError("TOKEN_NOT_FOUND", "Token not found")
    return json_response(Message(message=f"Token {token_id} revoked"))
