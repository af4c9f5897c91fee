"""Response models of the service endpoints: /healthz."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from uptime_server.schemas.base import Count, ResponseModel


class AgentCounts(ResponseModel):
    degraded: Count = Field(
        description="Probe agents whose connectivity canary fails (seen in the last 5 minutes); "
        "their failed checks are not counted (docs/agents.md). Which ones: GET /api/v1/agents."
    )


class Health(ResponseModel):
    status: Literal["ok", "error"]
    database: Literal["ok", "unavailable"]
    scheduler_lag_seconds: Annotated[float, Field(ge=0)] | None
    # Neither is required: /healthz leaves them out when there is nothing to
    # say, so the usual answer keeps the shape it always had (api/health.py).
    reason: str | None = Field(
        default=None,
        description="Why the answer is 503: the database cannot be reached, the engine's "
        "database worker cannot use it, or the engine has stalled (docs/systemd.md). "
        "Present only then.",
    )
    agents: AgentCounts | None = Field(
        default=None,
        description="How many probe agents are degraded; present only when any is. "
        "This answer is public: it names none.",
    )

    def to_json(self) -> dict[str, Any]:
        body = super().to_json()
        for optional in ("reason", "agents"):
            if body[optional] is None:
                del body[optional]
        return body
