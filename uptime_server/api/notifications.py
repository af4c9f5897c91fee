"""The notifications resource: /api/v1/notifications (docs/api.md#notifications)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from uptime_server.auth.teams import current_acting
from uptime_server.models import NOTIFICATION_TYPES
from uptime_server.notify.outbox import mail_domain
from uptime_server.schemas.base import data, data_of, json_response, page_count
from uptime_server.schemas.notifications import (
    Acknowledged,
    ActiveMeta,
    ActiveNotifications,
    Delivery,
    Notification,
    NotificationDetail,
    NotificationList,
    NotificationPages,
    RecentNotifications,
    RecentPages,
    Resolved,
)
from uptime_server.services import notifications as notification_service
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import (
    ID_SCHEMA,
    PAGE,
    TIME_QUERY,
    choice,
    documenter,
    limit,
    query,
)
from uptime_server.wsgi.query_params import choice_param, int_param, time_param

bp = Blueprint("notifications", __name__, url_prefix="/notifications")

DEFAULT_LIMIT = 50
MAX_LIMIT = 100
TYPES = NOTIFICATION_TYPES
STATUSES = ("active", "resolved")
BOOLEANS = ("true", "false")
TAG = "notifications"
doc = documenter(TAG)
PAGE_PARAMS = (PAGE, limit(DEFAULT_LIMIT, MAX_LIMIT))


def _page_args() -> tuple[int, int]:
    page = int_param(request.args, "page", 1, 1, None)
    size = int_param(request.args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    return page, size


def _suppressed() -> bool | None:
    value = choice_param(request.args, "suppressed", BOOLEANS)
    return None if value is None else value == "true"


@bp.get("/active")
@doc("activeNotifications", ok=ActiveNotifications)
def active() -> Any:
    """Unresolved notifications."""
    rows = notification_service.list_active(current_acting())
    return json_response(
        ActiveNotifications(
            data=[Notification.of(n) for n in rows],
            meta=ActiveMeta(count=len(rows), timestamp=now()),
        )
    )


@bp.get("/recent")
@doc("recentNotifications", ok=RecentNotifications, errors=(400,), params=PAGE_PARAMS)
def recent() -> Any:
    """Notifications of the last 24 hours."""
    page, size = _page_args()
    result = notification_service.list_recent(current_acting(), now=now(), page=page, limit=size)
    pagination = RecentPages(
        page=page, limit=size, total=result.total, has_next=page * size < result.total
    )
    return json_response(
        RecentNotifications(data=[Notification.of(n) for n in result.rows], pagination=pagination)
    )


@bp.get("")
@doc(
    "listNotifications",
    ok=NotificationList,
    errors=(400,),
    params=(
        *PAGE_PARAMS,
        query("monitor_id", ID_SCHEMA),
        choice("type", TYPES),
        choice("status", STATUSES),
        query("since", TIME_QUERY, "Only notifications started at or after this time"),
        query(
            "suppressed",
            {"type": "string", "enum": list(BOOLEANS)},
            "true: only suppressed notifications (of blocked monitors); false: only the others",
        ),
    ),
)
def list_notifications() -> Any:
    """Notifications, newest first."""
    page, size = _page_args()
    filters = notification_service.Filters(
        monitor_id=int_param(request.args, "monitor_id", None, 1, None),  # type: ignore[arg-type]
        type=choice_param(request.args, "type", TYPES),
        status=choice_param(request.args, "status", STATUSES),
        since=time_param(request.args, "since"),
        suppressed=_suppressed(),
    )
    result = notification_service.list_filtered(current_acting(), filters, page=page, limit=size)
    pages = page_count(result.total, size)
    pagination = NotificationPages(
        page=page,
        limit=size,
        total=result.total,
        pages=pages,
        has_next=page < pages,
        has_prev=page > 1,
    )
    return json_response(
        NotificationList(data=[Notification.of(n) for n in result.rows], pagination=pagination)
    )


@bp.get("/<int:notification_id>")
@doc("getNotification", ok=data(NotificationDetail), errors=(404,))
def show(notification_id: int) -> Any:
    """One notification, with each channel's delivery."""
    note = notification_service.get_owned(current_acting(), notification_id)
    sent = [Delivery.of(row, name) for row, name in notification_service.deliveries(note)]
    return data_of(NotificationDetail(**Notification.of(note).__dict__, deliveries=sent))


@bp.post("/<int:notification_id>/acknowledge")
@doc("acknowledgeNotification", ok=Acknowledged, errors=(404, 409))
def acknowledge(notification_id: int) -> Any:
    """Acknowledge an active notification."""
    note = notification_service.acknowledge(
        current_acting(), notification_id, now=now(), mail_domain=mail_domain(settings().mail_from)
    )
    return json_response(Acknowledged.of(note))


@bp.post("/<int:notification_id>/resolve")
@doc("resolveNotification", ok=Resolved, errors=(404, 409))
def resolve(notification_id: int) -> Any:
    """Resolve an active notification by hand."""
    note = notification_service.resolve(current_acting(), notification_id, now=now())
    return json_response(Resolved.of(note))
