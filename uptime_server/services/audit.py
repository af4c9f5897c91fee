"""The audit log of a team: who did what, when, through which session or token.

``record`` is called by the service or view that made the change, inside the
change's transaction where there is one, so a change and its line land
together. Details name fields and counts, never secret values (channel
configs, tokens, headers). Lines older than ``UPTIME_AUDIT_RETENTION_DAYS``
are pruned by housekeeping (``engine.housekeeping.prune_audit_log``).
docs/teams.md#the-audit-log.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from uptime_server.auth.teams import Acting
from uptime_server.models import AuditEvent

MAX_LIMIT = 1000


def record(
    acting: Acting,
    action: str,
    target_type: str | None = None,
    target_id: int | None = None,
    details: dict[str, Any] | None = None,
    *,
    at: datetime,
    team_id: int | None = None,
) -> AuditEvent:
    """Write one line for *acting*'s team (or *team_id*)."""
    return AuditEvent.create(
        team=acting.team_id if team_id is None else team_id,
        at=at,
        actor=acting.user_id,
        actor_name=acting.user_name[:200],
        via_type=acting.via_type,
        via_id=acting.via_id,
        action=action,
        target_type=target_type,
        target_id=target_id,
        details=details or {},
    )


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The names of the fields whose values differ (the values are not kept)."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def list_events(
    team_id: int,
    *,
    since: datetime | None = None,
    actor: int | None = None,
    action: str | None = None,
    limit: int = 100,
) -> list[AuditEvent]:
    """The team's lines, newest first; *action* ending in ``.`` matches a prefix."""
    query = AuditEvent.select().where(AuditEvent.team == team_id)
    if since is not None:
        query = query.where(AuditEvent.at >= since)
    if actor is not None:
        query = query.where(AuditEvent.actor == actor)
    if action:
        if action.endswith("."):
            query = query.where(AuditEvent.action.startswith(action))
        else:
            query = query.where(AuditEvent.action == action)
    return list(query.order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit))
