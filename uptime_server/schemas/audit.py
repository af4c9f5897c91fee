"""Response models of the audit log: ``GET /teams/{team}/audit`` (docs/teams.md#the-audit-log)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Field

from uptime_server.schemas.base import ResponseModel, UtcTime

# An action filter: an exact action (monitor.create) or a prefix ending in "." (monitor.).
ACTION_PATTERN = r"^[a-z_]{1,32}(?:\.[a-z_]{0,31})?$"


class Actor(ResponseModel):
    id: Annotated[int | None, Field(description="null once the account is deleted")]
    name: Annotated[str, Field(description="The name when the line was written")]


class Via(ResponseModel):
    type: Literal["session", "token", "system"]
    id: Annotated[int | None, Field(description="The session's or the API token's id")]


class Target(ResponseModel):
    type: Annotated[str, Field(description="monitor, channel, status_page, maintenance, ...")]
    id: int | None


class AuditEvent(ResponseModel):
    id: int
    at: UtcTime
    team_id: int
    actor: Actor
    via: Via
    action: Annotated[str, Field(description="e.g. monitor.create, member.role, monitors.apply")]
    target: Annotated[Target | None, Field(description="null: the action has no one object")]
    details: Annotated[
        dict[str, Any],
        Field(description="Names of changed fields, counts, names: never a secret value"),
    ]

    @classmethod
    def of(cls, row: Any) -> Self:
        target = None
        if row.target_type is not None:
            target = Target(type=row.target_type, id=row.target_id)
        return cls(
            id=row.id,
            at=row.at,
            team_id=row.team_id,
            actor=Actor(id=row.actor_id, name=row.actor_name),
            via=Via(type=row.via_type, id=row.via_id),
            action=row.action,
            target=target,
            details=row.details or {},
        )


class AuditList(ResponseModel):
    data: Annotated[list[AuditEvent], Field(description="Newest first")]
