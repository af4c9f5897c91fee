"""Response models of the service endpoints: /healthz."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from uptime_server.schemas.base import ResponseModel


class Health(ResponseModel):
    status: Literal["ok", "error"]
    database: Literal["ok", "unavailable"]
    scheduler_lag_seconds: Annotated[float, Field(ge=0)] | None
