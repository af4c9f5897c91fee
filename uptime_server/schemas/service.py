"""Response models of the service endpoints: /healthz."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from uptime_server.schemas.base import ResponseModel


class DegradedAgent(ResponseModel):
    id: int
    name: str
    location: str


class Health(ResponseModel):
    status: Literal["ok", "error"]
    database: Literal["ok", "unavailable"]
    scheduler_lag_seconds: Annotated[float, Field(ge=0)] | None
    # Not required: /healthz leaves it out while no agent is degraded, so the
    # usual answer keeps the shape it always had (api/health.py).
    degraded_agents: list[DegradedAgent] = Field(
        default_factory=list,
        description="Probe agents whose connectivity canary fails (seen in the last 5 minutes); "
        "their failed checks are not counted (docs/agents.md). Present only when there are any.",
    )
