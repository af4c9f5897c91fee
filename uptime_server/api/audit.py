"""The audit log: GET /api/v1/teams/{team}/audit (docs/teams.md#the-audit-log).

Admins and owners read who did what in their team, when, and through which
session or token. The team is named in the path (id or slug), as in
``api.teams``; a team the caller is not in is 404 TEAM_NOT_FOUND.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, request

from uptime_server.api.teams import TEAM_PARAM, acting_in
from uptime_server.errors import validation_error
from uptime_server.schemas.audit import ACTION_PATTERN, AuditEvent, AuditList
from uptime_server.schemas.base import json_response
from uptime_server.services import audit
from uptime_server.wsgi.access import requires, team_free
from uptime_server.wsgi.context import now
from uptime_server.wsgi.operations import ID_SCHEMA, documenter, limit, query
from uptime_server.wsgi.query_params import int_param, since_param

bp = Blueprint("audit", __name__, url_prefix="/teams")
doc = documenter("teams")
DEFAULT_LIMIT = 100
_ACTION = re.compile(ACTION_PATTERN)


@bp.get("/<team>/audit")
@team_free
@requires("admin")
@doc(
    "listAuditEvents",
    ok=AuditList,
    errors=(400, 404),
    params=(
        TEAM_PARAM,
        query(
            "since",
            {"type": "string", "maxLength": 64},
            "Only lines at or after this time: ISO 8601, or a duration back from now "
            "(7d, 12h, 30m)",
        ),
        query("actor", ID_SCHEMA, "Only lines of this user id"),
        query(
            "action",
            {"type": "string", "pattern": ACTION_PATTERN},
            "An exact action (monitor.create) or a prefix ending in '.' (monitor.)",
        ),
        limit(DEFAULT_LIMIT, audit.MAX_LIMIT),
    ),
)
def list_events(team: str) -> Any:
    """The team's audit log, newest first (admin)."""
    acting = acting_in(team, "admin", "read the audit log")
    args = request.args
    since = since_param(args, "since", now())
    actor = int_param(args, "actor", 0, 1, None) or None
    action = args.get("action", "").strip() or None
    if action is not None and not _ACTION.fullmatch(action):
        raise validation_error(
            {"action": ["must be an action (monitor.create) or a prefix ending in '.' (monitor.)"]}
        )
    size = int_param(args, "limit", DEFAULT_LIMIT, 1, audit.MAX_LIMIT)
    rows = audit.list_events(acting.team_id, since=since, actor=actor, action=action, limit=size)
    return json_response(AuditList(data=[AuditEvent.of(row) for row in rows]))
