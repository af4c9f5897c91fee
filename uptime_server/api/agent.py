"""The agent API: /api/v1/agent/claims, /leases, /results (docs/agents.md).

Called by probe agents with their agent token (``Authorization: Bearer
upa_...``), which the app's guard authenticates (``current_agent``); sessions
and API tokens are refused here, and agent tokens everywhere else. Every call
carries the agent's report of itself (version, degraded, checks per second,
lag), kept for ``GET /api/v1/agents`` and ``/healthz``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, g

from uptime_server.api.body import json_body
from uptime_server.models import AgentToken
from uptime_server.schemas.agents import (
    ClaimRequest,
    Claims,
    Renewed,
    RenewRequest,
    ResultBatch,
    ResultsAnswer,
    parse_claim_request,
    parse_renew_request,
    parse_result_batch,
)
from uptime_server.schemas.base import json_response
from uptime_server.services import agents as service
from uptime_server.wsgi.access import agent_only
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import documenter

bp = Blueprint("agent", __name__, url_prefix="/agent")
AGENT_SECURITY = [{"agentToken": []}]
doc = documenter("agents")


def current_agent() -> AgentToken:
    agent: AgentToken = g.uptime_agent
    return agent


@bp.post("/claims")
@agent_only
@doc("claimChecks", ok=Claims, body=ClaimRequest, body_required=False, security=AGENT_SECURITY)
def claim_checks() -> Any:
    """Claim due checks of the agent's location, each with its lease and what to run."""
    request = parse_claim_request(json_body(optional=True))
    agent, at, config = current_agent(), now(), settings()
    service.report(agent, request.agent, at)
    claims, _ = service.claim(agent, config, request.limit, at)
    return json_response(
        Claims.model_validate(
            {
                "data": claims,
                "lease_seconds": config.lease_seconds,
                "renew_every_seconds": round(config.lease_seconds / 3, 3),
            }
        )
    )


@bp.post("/leases")
@agent_only
@doc("renewLeases", ok=Renewed, body=RenewRequest, security=AGENT_SECURITY)
def renew_leases() -> Any:
    """Renew the leases of checks the agent still runs or holds results of, in one batch."""
    request = parse_renew_request(json_body())
    agent, at = current_agent(), now()
    service.report(agent, request.agent, at)
    refs = [(lease.monitor_id, lease.lease_owner) for lease in request.leases]
    renewed, lost, expires = service.renew(agent, settings(), refs, at)
    return json_response(
        Renewed.model_validate(
            {
                "lease_expires_at": expires,
                "renewed": [{"monitor_id": m, "lease_owner": o} for m, o in renewed],
                "lost": [{"monitor_id": m, "lease_owner": o} for m, o in lost],
            }
        )
    )


@bp.post("/results")
@agent_only
@doc("postResults", ok=ResultsAnswer, body=ResultBatch, security=AGENT_SECURITY)
def post_results() -> Any:
    """Record a batch of results; a batch id posted again records nothing and answers the same."""
    batch = parse_result_batch(json_body())
    agent, at = current_agent(), now()
    service.report(agent, batch.agent, at)
    answer = service.record_batch(agent, settings(), batch, at)
    return json_response(ResultsAnswer.model_validate(answer))
