"""Request bodies of the monitors resource besides the monitor itself: pause and bulk.

The monitor's own configuration and its alert settings are validated by
``uptime_server.validation`` (``MonitorConfig``, ``AlertSettingsIn``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from uptime_server.query_params import INT64_MAX
from uptime_server.schemas.monitors import BulkAction

Reason = Annotated[str | None, Field(max_length=500)]
MonitorId = Annotated[int, Field(ge=1, le=INT64_MAX)]


class PauseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: Reason = None


class BulkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    action: BulkAction
    monitor_ids: Annotated[list[MonitorId], Field(min_length=1, max_length=100)]
    reason: Reason = None
    settings: Annotated[
        dict[str, Any] | None,
        WithJsonSchema(
            {
                "anyOf": [{"$ref": "#/components/schemas/MonitorUpdate"}, {"type": "null"}],
                "description": "Required for, and only accepted with, action update.",
            }
        ),
    ] = None
