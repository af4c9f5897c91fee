"""The notifications resource: /api/v1/notifications (api.md, decisions §2)."""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, request
from flask_login import current_user

from uptime_server import notification_service
from uptime_server.clock import isoformat
from uptime_server.context import now
from uptime_server.models import Notification
from uptime_server.query_params import choice_param, int_param, time_param

bp = Blueprint("notifications", __name__, url_prefix="/notifications")

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
TYPES = ("downtime", "recovery")
STATUSES = ("active", "resolved")


def notification_json(n: Notification) -> dict[str, Any]:
    """Every field of api.md's Notification (the list items carry them all too)."""
    return {
        "id": n.id,
        "monitor_id": n.monitor_id,
        "monitor_name": n.monitor.name,
        "monitor_url": n.monitor.url,
        "type": n.type,
        "message": n.message,
        "status": n.status,
        "started_at": isoformat(n.started_at),
        "resolved_at": isoformat(n.resolved_at),
        "duration": n.duration,
        "notification_method": "email",
        "acknowledged": n.acknowledged,
        "acknowledged_at": isoformat(n.acknowledged_at),
        "email_sent_at": isoformat(n.email_sent_at),
        "error_details": {
            "status_code": n.error_status_code,
            "response_time": n.error_response_time,
            "error_message": n.error_message or "",
        },
    }


def _page_args() -> tuple[int, int]:
    page = int_param(request.args, "page", 1, 1, None)
    limit = int_param(request.args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    return page, limit


@bp.get("/active")
def active() -> Any:
    rows = notification_service.list_active(current_user)
    return {
        "data": [notification_json(n) for n in rows],
        "meta": {"count": len(rows), "timestamp": isoformat(now())},
    }


@bp.get("/recent")
def recent() -> Any:
    page, limit = _page_args()
    result = notification_service.list_recent(current_user, now=now(), page=page, limit=limit)
    return {
        "data": [notification_json(n) for n in result.rows],
        "pagination": {
            "page": page,
            "limit": limit,
            "total": result.total,
            "has_next": page * limit < result.total,
        },
    }


@bp.get("")
def list_notifications() -> Any:
    page, limit = _page_args()
    filters = notification_service.Filters(
        monitor_id=int_param(request.args, "monitor_id", None, 1, None),  # type: ignore[arg-type]
        type=choice_param(request.args, "type", TYPES),
        status=choice_param(request.args, "status", STATUSES),
        since=time_param(request.args, "since"),
    )
    result = notification_service.list_filtered(current_user, filters, page=page, limit=limit)
    pages = math.ceil(result.total / limit)
    return {
        "data": [notification_json(n) for n in result.rows],
        "pagination": {
            "page": page,
            "limit": limit,
            "total": result.total,
            "pages": pages,
            "has_next": page < pages,
            "has_prev": page > 1,
        },
    }


@bp.get("/<int:notification_id>")
def show(notification_id: int) -> Any:
    return {
        "data": notification_json(notification_service.get_owned(current_user, notification_id))
    }


@bp.post("/<int:notification_id>/acknowledge")
def acknowledge(notification_id: int) -> Any:
    n = notification_service.acknowledge(current_user, notification_id, now=now())
    return {
        "message": "Notification acknowledged",
        "data": {
            "id": n.id,
            "acknowledged": True,
            "acknowledged_at": isoformat(n.acknowledged_at),
        },
    }


@bp.post("/<int:notification_id>/resolve")
def resolve(notification_id: int) -> Any:
    n = notification_service.resolve(current_user, notification_id, now=now())
    return {
        "message": "Notification resolved",
        "data": {"id": n.id, "status": "resolved", "resolved_at": isoformat(n.resolved_at)},
    }
