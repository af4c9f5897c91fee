"""Managing probe agents: /api/v1/agents (docs/agents.md#managing-agents).

An agent runs the checks of every user's monitors in its location, so its
token is a server-wide credential: only admins (``users.is_admin``,
``auth/admins``) may create, list or revoke agents here. Creating and
revoking take a signed-in session (``access.session_only``): a token does
not mint agent_tokens. Listing takes a session or an API token. Anyone else gets
403. On the server's own machine, ``uptime server agent-token`` and
``uptime server agents`` do the same without the API.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.auth import agent_tokens
from uptime_server.errors import ApiError, validation_error
from uptime_server.schemas.agents import (
    Agent,
    AgentCreate,
    AgentCreated,
    AgentList,
    parse_agent_create,
)
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.wsgi.access import session_only, team_free
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import documenter

bp = Blueprint("agents", __name__, url_prefix="/agents")
doc = documenter("agents")


def require_admin() -> None:
    # The flag on the account only: an email address proves nothing by itself.
    if not current_user.is_admin:
        raise ApiError(
            "FORBIDDEN",
            "Managing probe agents takes an admin: ask one to run "
            "`uptime server admin grant` on the server",
        )


@bp.post("")
@team_free
@session_only
@doc("createAgent", ok={201: data(AgentCreated)}, body=AgentCreate)
def create_agent() -> Any:
    """Create a probe agent's token for one location; the response shows it this once."""
    require_admin()
    request = parse_agent_create(json_body())
    try:
        secret, row = agent_tokens.create_agent(
            settings(),
            location=request.location,
            name=request.name,
            expires_in=request.expires_in,
            now=now(),
        )
    except agent_tokens.UnknownLocation as exc:
        raise validation_error({"location": [str(exc)]}) from None
    return data_of(AgentCreated.from_row(row, token=secret)), 201


@bp.get("")
@team_free
@doc("listAgents", ok=AgentList)
def list_agents() -> Any:
    """List probe agents: location, version, last seen, checks per second, lag, degraded."""
    require_admin()
    return json_response(AgentList(data=[Agent.of(row) for row in agent_tokens.list_agents()]))


@bp.delete("/<int:agent_id>")
@team_free
@session_only
@doc("revokeAgent", ok=Message, errors=(404,))
def revoke_agent(agent_id: int) -> Any:
    """Revoke a probe agent's token: its next call is refused, its leases expire."""
    require_admin()
    if not agent_tokens.revoke_agent(agent_id):
        raise ApiError("NOT_FOUND", "Agent not found")
    return json_response(Message(message=f"Agent {agent_id} revoked"))
