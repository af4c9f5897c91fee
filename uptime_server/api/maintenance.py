"""The maintenance resource: /api/v1/maintenance (docs/maintenance.md, docs/api.md#maintenance)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from uptime_server.api.body import json_body
from uptime_server.auth.teams import current_acting
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.maintenance import (
    Maintenance,
    MaintenanceBody,
    MaintenanceList,
    MaintenanceStart,
    current_fields,
    parse_body,
)
from uptime_server.schemas.requests import parse_body as parse_model
from uptime_server.services import maintenance as maintenance_service
from uptime_server.wsgi.context import now
from uptime_server.wsgi.operations import documenter

bp = Blueprint("maintenance", __name__, url_prefix="/maintenance")
doc = documenter("maintenance")


def _window(row: Any) -> dict[str, Any]:
    return data_of(Maintenance.of(row, now()))


@bp.get("")
@doc("listMaintenance", ok=MaintenanceList)
def list_windows() -> Any:
    """List the caller's maintenance windows."""
    moment = now()
    rows = maintenance_service.list_windows(current_acting())
    return json_response(MaintenanceList(data=[Maintenance.of(r, moment) for r in rows]))


@bp.post("")
@doc("createMaintenance", ok={201: data(Maintenance)}, errors=(403,), body=MaintenanceBody)
def create() -> Any:
    """Create a maintenance window."""
    moment = now()
    body = parse_body(json_body(), now=moment)
    return _window(maintenance_service.create_window(current_acting(), body, now=moment)), 201


@bp.get("/<int:window_id>")
@doc("getMaintenance", ok=data(Maintenance), errors=(404,))
def show(window_id: int) -> Any:
    """One maintenance window."""
    return _window(maintenance_service.get_owned(current_acting(), window_id))


@bp.put("/<int:window_id>")
@doc("updateMaintenance", ok=data(Maintenance), errors=(404,), body=MaintenanceBody)
def update(window_id: int) -> Any:
    """Change a window; omitted fields keep their values, a new schedule replaces the old."""
    acting = current_acting()
    row = maintenance_service.get_owned(acting, window_id)
    moment = now()
    body = parse_body(json_body(), current_fields(row), now=moment)
    return _window(maintenance_service.update_window(acting, row, body, now=moment))


@bp.delete("/<int:window_id>")
@doc("deleteMaintenance", ok=Message, errors=(404,))
def delete(window_id: int) -> Any:
    """Delete a maintenance window."""
    acting = current_acting()
    row = maintenance_service.get_owned(acting, window_id)
    maintenance_service.delete_window(acting, row, now=now())
    return json_response(Message(message="Maintenance window deleted"))


@bp.post("/<int:window_id>/start")
@doc(
    "startMaintenance",
    ok=data(Maintenance),
    errors=(404,),
    body=MaintenanceStart,
    body_required=False,
)
def start(window_id: int) -> Any:
    """Open a window by hand now, for duration seconds or until ended."""
    acting = current_acting()
    row = maintenance_service.get_owned(acting, window_id)
    body = parse_model(MaintenanceStart, json_body(optional=True))
    return _window(maintenance_service.start_window(acting, row, duration=body.duration, now=now()))


@bp.post("/<int:window_id>/end")
@doc("endMaintenance", ok=data(Maintenance), errors=(404,))
def end(window_id: int) -> Any:
    """End a window now: the opening by hand and the scheduled occurrence running."""
    acting = current_acting()
    row = maintenance_service.get_owned(acting, window_id)
    return _window(maintenance_service.end_window(acting, row, now=now()))
