"""The monitors resource: /api/v1/monitors (docs/api.md#monitors)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from uptime_server.api.body import json_body
from uptime_server.api.request_schemas import (
    ALERT_SETTINGS_UPDATE,
    MONITOR_CREATE,
    MONITOR_UPDATE,
    MONITORS_APPLY,
)
from uptime_server.auth.teams import current_acting
from uptime_server.errors import validation_error
from uptime_server.maintenance import windows
from uptime_server.models import MONITOR_TYPES
from uptime_server.models import Monitor as MonitorRow
from uptime_server.notify import outbox
from uptime_server.schemas.base import Message, Pages, data, data_of, json_response, page_count
from uptime_server.schemas.monitor_apply import ApplyRequest, ApplyResult, Export
from uptime_server.schemas.monitor_config import parse_monitor, parse_monitor_update
from uptime_server.schemas.monitor_requests import (
    BulkRequest,
    PauseRequest,
    parse_bulk,
    parse_pause,
)
from uptime_server.schemas.monitors import (
    AlertSettings,
    BulkOutcome,
    Dependencies,
    Monitor,
    MonitorCreated,
    MonitorList,
    MonitorMessage,
    summary_json,
)
from uptime_server.schemas.requests import parse_body
from uptime_server.schemas.tags import MAX_TAGS, TAG_PATTERN, tag_query
from uptime_server.services import dependencies as dependency_service
from uptime_server.services import monitor_apply
from uptime_server.services import monitors as monitor_service
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import PAGE, choice, documenter, limit, query
from uptime_server.wsgi.query_params import choice_param, int_param

bp = Blueprint("monitors", __name__, url_prefix="/monitors")

LIST_STATUSES = ("online", "offline", "warning", "pending", "maintenance")
LIST_TYPES = MONITOR_TYPES
TAG = "monitors"
doc = documenter(TAG)
TAG_PARAM = {
    **query(
        "tag",
        {
            "type": "array",
            "items": {"type": "string", "pattern": TAG_PATTERN},
            "maxItems": MAX_TAGS,
        },
        "Repeat for more: only monitors carrying every one of these tags (case-folded)",
    ),
    "style": "form",
    "explode": True,
}


def _monitor(m: MonitorRow) -> Monitor:
    monitor_service.show_maintenance([m], windows.active_monitor_ids(now(), [m.team_id]))
    return Monitor.of(m, **monitor_service.figures(m, now=now(), settings=settings()))


def _pages(page: int, size: int, total: int) -> Pages:
    return Pages(page=page, limit=size, total=total, pages=page_count(total, size))


@bp.get("")
@doc(
    "listMonitors",
    ok=MonitorList,
    errors=(400,),
    params=(
        PAGE,
        limit(25, 100),
        choice("status", LIST_STATUSES),
        choice("type", LIST_TYPES),
        query("search", {"type": "string"}, "Case-insensitive substring of name or URL"),
        TAG_PARAM,
    ),
)
def list_monitors() -> Any:
    """List the caller's monitors."""
    args = request.args
    page = int_param(args, "page", 1, 1, None)
    size = int_param(args, "limit", 25, 1, 100)
    filters = monitor_service.Filters(
        status=choice_param(args, "status", LIST_STATUSES),
        type=choice_param(args, "type", LIST_TYPES),
        search=args.get("search", "").strip(),
        tags=tuple(tag_query(args)),
    )
    if "\x00" in filters.search or len(filters.search) > 2048:
        raise validation_error({"search": ["must be at most 2048 characters, without NUL"]})
    listing = monitor_service.list_monitors(
        current_acting(), filters, page=page, limit=size, now=now()
    )
    summaries = [
        summary_json(
            m,
            uptime_24h=listing.uptime[m["id"]].get("24h"),
            tags=listing.tags[m["id"]],
            blocked=bool(listing.blocked_by.get(m["id"])),
        )
        for m in listing.rows
    ]
    # MonitorList's shape, its summaries written without a model each (summary_json).
    return json_response(
        {"data": summaries, "pagination": _pages(page, size, listing.total).to_json()}
    )


@bp.post("")
@doc("createMonitor", ok={201: data(MonitorCreated)}, errors=(403,), body=MONITOR_CREATE)
def create() -> Any:
    """Create a monitor."""
    cfg = parse_monitor(json_body(), settings())
    m = monitor_service.create_monitor(current_acting(), cfg, now=now(), settings=settings())
    ping_url = monitor_service.ping_url(m, settings()) if m.type == "heartbeat" else None
    created = MonitorCreated.from_row(m, ping_url=ping_url, depends_on=cfg.depends_on)
    return data_of(created), 201


@bp.get("/<int:monitor_id>")
@doc("getMonitor", ok=data(Monitor), errors=(404,))
def show(monitor_id: int) -> Any:
    """One monitor."""
    return data_of(_monitor(monitor_service.get_owned(current_acting(), monitor_id)))


@bp.get("/<int:monitor_id>/dependencies")
@doc("getMonitorDependencies", ok=data(Dependencies), errors=(404,))
def dependencies(monitor_id: int) -> Any:
    """The monitor with its whole chains of dependencies, up and down."""
    m = monitor_service.get_owned(current_acting(), monitor_id)
    in_maintenance = windows.active_monitor_ids(now(), [m.team_id])

    def shown(mid: int, status: str) -> str:
        return "maintenance" if mid in in_maintenance else status

    tree = dependency_service.tree(m, shown)
    return data_of(Dependencies(monitor=tree.monitor, parents=tree.parents, children=tree.children))


@bp.put("/<int:monitor_id>")
@doc("updateMonitor", ok=data(Monitor), errors=(404,), body=MONITOR_UPDATE)
def update(monitor_id: int) -> Any:
    """Change some of a monitor's fields."""
    acting = current_acting()
    m = monitor_service.get_owned(acting, monitor_id)
    cfg = parse_monitor_update(monitor_service.config_of(m), json_body(), settings())
    updated = monitor_service.update_monitor(acting, m, cfg, now=now(), settings=settings())
    return data_of(_monitor(updated))


@bp.delete("/<int:monitor_id>")
@doc("deleteMonitor", ok=Message, errors=(404,))
def delete(monitor_id: int) -> Any:
    """Delete a monitor with its history."""
    acting = current_acting()
    monitor_service.delete_monitor(acting, monitor_service.get_owned(acting, monitor_id), now=now())
    return json_response(Message(message="Monitor deleted"))


@bp.post("/<int:monitor_id>/pause")
@doc("pauseMonitor", ok=MonitorMessage, errors=(404, 409), body=PauseRequest, body_required=False)
def pause(monitor_id: int) -> Any:
    """Pause checks."""
    acting = current_acting()
    m = monitor_service.get_owned(acting, monitor_id)
    reason = parse_pause(json_body(optional=True))
    m = monitor_service.pause_monitor(acting, m, reason, now=now())
    return json_response(MonitorMessage(message="Monitor paused", data=_monitor(m)))


@bp.post("/<int:monitor_id>/resume")
@doc("resumeMonitor", ok=MonitorMessage, errors=(404, 409))
def resume(monitor_id: int) -> Any:
    """Resume checks."""
    acting = current_acting()
    m = monitor_service.resume_monitor(
        acting, monitor_service.get_owned(acting, monitor_id), now=now()
    )
    return json_response(MonitorMessage(message="Monitor resumed", data=_monitor(m)))


@bp.post("/<int:monitor_id>/ping-token")
@doc("rotatePingToken", ok=data(Monitor), errors=(404, 409))
def rotate_ping_token(monitor_id: int) -> Any:
    """Give a heartbeat monitor a new ping URL; the old one stops working."""
    acting = current_acting()
    m = monitor_service.get_owned(acting, monitor_id)
    rotated = monitor_service.rotate_ping_token(acting, m, now=now(), settings=settings())
    return data_of(_monitor(rotated))


@bp.get("/<int:monitor_id>/alerts")
@doc("getMonitorAlerts", ok=data(AlertSettings), errors=(404,))
def get_alerts(monitor_id: int) -> Any:
    """Alert settings."""
    m = monitor_service.get_owned(current_acting(), monitor_id)
    stored = monitor_service.alert_settings(m)
    return data_of(
        AlertSettings.of(stored, outbox.team_recipients(m.team_id), locations=len(m.locations))
    )


@bp.put("/<int:monitor_id>/alerts")
@doc("updateMonitorAlerts", ok=data(AlertSettings), errors=(404,), body=ALERT_SETTINGS_UPDATE)
def put_alerts(monitor_id: int) -> Any:
    """Change alert settings."""
    acting = current_acting()
    m = monitor_service.get_owned(acting, monitor_id)
    stored = monitor_service.update_alert_settings(acting, m, json_body(), now=now())
    return data_of(
        AlertSettings.of(stored, outbox.team_recipients(m.team_id), locations=len(m.locations))
    )


@bp.post("/<int:monitor_id>/badge-token")
@doc("rotateBadgeToken", ok=data(Monitor), errors=(400, 404))
def rotate_badge_token(monitor_id: int) -> Any:
    """Give the monitor's badges a new token; URLs with the old one answer 404."""
    acting = current_acting()
    m = monitor_service.get_owned(acting, monitor_id)
    rotated = monitor_service.rotate_badge_token(acting, m, now=now())
    return data_of(_monitor(rotated))


@bp.post("/bulk")
@doc("bulkMonitors", ok=data(BulkOutcome), body=BulkRequest)
def bulk() -> Any:
    """Pause, resume, delete or update many monitors."""
    req = parse_bulk(json_body(), settings())
    if req.tag is not None:
        ids = monitor_service.ids_tagged(current_acting(), req.tag)
    else:
        ids = list(dict.fromkeys(req.monitor_ids or ()))
    result = monitor_service.bulk_action(
        current_acting(),
        req.action,
        ids,
        reason=req.reason or None,
        patch=req.settings,
        now=now(),
        settings=settings(),
    )
    return data_of(BulkOutcome(action=req.action, **result))


@bp.post("/apply")
@doc("applyMonitors", ok=data(ApplyResult), errors=(403,), body=MONITORS_APPLY)
def apply() -> Any:
    """Make your monitors match a whole desired set, in one transaction."""
    req = parse_body(ApplyRequest, json_body())
    desired = monitor_apply.validate(req, settings())
    steps = monitor_apply.plan(current_acting(), desired, prune=req.prune, settings=settings())
    applied = False
    if not req.dry_run:
        applied = monitor_apply.apply(current_acting(), steps, now=now(), settings=settings())
    return data_of(ApplyResult.of(steps, dry_run=req.dry_run, applied=applied))


@bp.get("/export")
@doc("exportMonitors", ok=data(Export), errors=(400,), params=(TAG_PARAM,))
def export() -> Any:
    """Your monitors as entries for apply, only the fields that differ from the defaults."""
    tags = tag_query(request.args)
    return data_of(Export(monitors=monitor_apply.export(current_acting(), tags, settings())))
