"""The monitors resource: /api/v1/monitors (decisions §1)."""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, request
from flask_login import current_user
from peewee import SQL, NodeList, fn

from uptime_server import monitor_service
from uptime_server.api.body import json_body
from uptime_server.clock import isoformat
from uptime_server.context import now, settings
from uptime_server.db import write_tx
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import AlertSettings, Monitor
from uptime_server.query_params import choice_param, int_param
from uptime_server.stats.figures import uptime_by_monitor
from uptime_server.validation import (
    AlertSettingsIn,
    check_patch_fields,
    parse_alert_settings,
    parse_monitor,
    parse_monitor_update,
)

bp = Blueprint("monitors", __name__, url_prefix="/monitors")

LIST_STATUSES = ("online", "offline", "warning", "pending")
LIST_TYPES = ("http", "https")


SUMMARY_COLUMNS = ("id", "name", "url", "type", "status", "paused", "response_time", "last_check")


def summary_json(m: Monitor, uptime: dict[str, float | None]) -> dict[str, Any]:
    return {
        "id": m.id,
        "name": m.name,
        "url": m.url,
        "type": m.type,
        "status": m.status,
        "paused": m.paused,
        "uptime_24h": uptime.get("24h"),
        "response_time": m.response_time,
        "last_check": isoformat(m.last_check),
    }


def monitor_json(m: Monitor) -> dict[str, Any]:
    uptime = uptime_by_monitor([m.id], now())[m.id]
    return {
        "id": m.id,
        "name": m.name,
        "url": m.url,
        "type": m.type,
        "method": m.method,
        "expected_status": m.expected_status,
        "timeout": m.timeout,
        "check_interval": m.check_interval,
        "retry_count": m.retry_count,
        "locations": m.locations,
        "follow_redirects": m.follow_redirects,
        "verify_ssl": m.verify_ssl,
        "headers": m.headers,
        "body": m.body,
        "expected_content": m.expected_content,
        "excluded_content": m.excluded_content,
        "json_path": m.json_path,
        "expected_json_value": m.expected_json_value,
        "degraded_response_time": m.degraded_response_time,
        "status": m.status,
        "checks_supported": m.checks_supported,
        "paused": m.paused,
        "paused_at": isoformat(m.paused_at),
        "pause_reason": m.pause_reason,
        "uptime_24h": uptime["24h"],
        "uptime_7d": uptime["7d"],
        "uptime_30d": uptime["30d"],
        "response_time": m.response_time,
        "status_code": m.status_code,
        "last_error": m.last_error,
        "last_check": isoformat(m.last_check),
        "last_success": isoformat(m.last_success),
        "last_failure": isoformat(m.last_failure),
        "cert_expires_at": isoformat(m.cert_expires_at),
        "next_check_at": isoformat(monitor_service.next_check_at(m)),
        "created_at": isoformat(m.created_at),
        "updated_at": isoformat(m.updated_at),
    }


def alerts_json(a: AlertSettings, owner_email: str) -> dict[str, Any]:
    return {
        "email_enabled": a.email_enabled,
        "email_recipients": a.email_recipients or [owner_email],
        "slack_enabled": a.slack_enabled,
        "slack_webhook_url": a.slack_webhook_url,
        "alert_on_recovery": a.alert_on_recovery,
        "alert_threshold": a.alert_threshold,
    }


def _like(expr: Any, needle: str) -> Any:
    escaped = needle.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return NodeList((fn.LOWER(expr), SQL("LIKE"), f"%{escaped}%", SQL("ESCAPE '\\'")))


@bp.get("")
def list_monitors() -> Any:
    args = request.args
    page = int_param(args, "page", 1, 1, None)
    limit = int_param(args, "limit", 25, 1, 100)
    status = choice_param(args, "status", LIST_STATUSES)
    kind = choice_param(args, "type", LIST_TYPES)
    search = args.get("search", "").strip()
    if "\x00" in search or len(search) > 2048:
        raise validation_error({"search": ["must be at most 2048 characters, without NUL"]})
    # Only the summary's columns: building full rows costs more than the query.
    columns = [getattr(Monitor, name) for name in SUMMARY_COLUMNS]
    query = Monitor.select(*columns).where(Monitor.user == current_user.id)
    if status:
        query = query.where(Monitor.status == status)
    if kind:
        query = query.where(Monitor.type == kind)
    if search:
        query = query.where(_like(Monitor.name, search) | _like(Monitor.url, search))
    total = query.count()
    # A page past the end is answered without asking the database for an
    # offset that may not even fit its integer type.
    rows = []
    if (page - 1) * limit < total:
        rows = list(query.order_by(Monitor.id).paginate(page, limit))
    uptime = uptime_by_monitor([m.id for m in rows], now(), windows=("24h",))
    return {
        "data": [summary_json(m, uptime[m.id]) for m in rows],
        "pagination": {
            "page": page,
            "limit": limit,
            "total": total,
            "pages": math.ceil(total / limit),
        },
    }


@bp.post("")
def create() -> Any:
    cfg = parse_monitor(json_body(), settings())
    m = monitor_service.create_monitor(current_user, cfg, now=now(), settings=settings())
    data = {
        "id": m.id,
        "name": m.name,
        "url": m.url,
        "type": m.type,
        "status": m.status,
        "created_at": isoformat(m.created_at),
    }
    return {"data": data}, 201


@bp.get("/<int:monitor_id>")
def show(monitor_id: int) -> Any:
    return {"data": monitor_json(monitor_service.get_owned(current_user, monitor_id))}


@bp.put("/<int:monitor_id>")
def update(monitor_id: int) -> Any:
    m = monitor_service.get_owned(current_user, monitor_id)
    cfg = parse_monitor_update(monitor_service.config_of(m), json_body(), settings())
    return {"data": monitor_json(monitor_service.update_monitor(m, cfg, now=now()))}


@bp.delete("/<int:monitor_id>")
def delete(monitor_id: int) -> Any:
    monitor_service.delete_monitor(monitor_service.get_owned(current_user, monitor_id))
    return {"message": "Monitor deleted"}


def _reason() -> str | None:
    body = json_body(optional=True)
    if not isinstance(body, dict):
        raise validation_error({"body": ["must be a JSON object"]})
    details = {k: ["unknown field"] for k in sorted(set(body) - {"reason"})}
    reason = body.get("reason")
    if not _valid_reason(reason):
        details["reason"] = [REASON_RULE]
    if details:
        raise validation_error(details)
    return reason or None


REASON_RULE = "must be a string of at most 500 characters, without NUL"


def _valid_reason(reason: Any) -> bool:
    if reason is None:
        return True
    return isinstance(reason, str) and len(reason) <= 500 and "\x00" not in reason


@bp.post("/<int:monitor_id>/pause")
def pause(monitor_id: int) -> Any:
    m = monitor_service.get_owned(current_user, monitor_id)
    m = monitor_service.pause_monitor(m, _reason(), now=now())
    return {"message": "Monitor paused", "data": monitor_json(m)}


@bp.post("/<int:monitor_id>/resume")
def resume(monitor_id: int) -> Any:
    m = monitor_service.resume_monitor(
        monitor_service.get_owned(current_user, monitor_id), now=now()
    )
    return {"message": "Monitor resumed", "data": monitor_json(m)}


ALERT_FIELDS = tuple(AlertSettingsIn.model_fields)


def _alert_settings(m: Monitor) -> AlertSettings:
    # Every monitor gets its row on create; one missing (inserted by hand or
    # an import) reads as the defaults rather than failing.
    return AlertSettings.get_or_none(AlertSettings.monitor == m.id) or AlertSettings(monitor=m.id)


@bp.get("/<int:monitor_id>/alerts")
def get_alerts(monitor_id: int) -> Any:
    m = monitor_service.get_owned(current_user, monitor_id)
    return {"data": alerts_json(_alert_settings(m), current_user.email)}


@bp.put("/<int:monitor_id>/alerts")
def put_alerts(monitor_id: int) -> Any:
    m = monitor_service.get_owned(current_user, monitor_id)
    stored = {k: getattr(_alert_settings(m), k) for k in ALERT_FIELDS}
    new = parse_alert_settings(stored, json_body())
    preserve = [getattr(AlertSettings, k) for k in ALERT_FIELDS]
    with write_tx():
        AlertSettings.insert(monitor=m.id, **new.model_dump()).on_conflict(
            conflict_target=[AlertSettings.monitor], preserve=preserve
        ).execute()
    return {"data": alerts_json(_alert_settings(m), current_user.email)}


BULK_ACTIONS = ("pause", "resume", "delete", "update")


@bp.post("/bulk")
def bulk() -> Any:
    body = json_body()
    if not isinstance(body, dict):
        raise validation_error({"body": ["must be a JSON object"]})
    action, ids, reason, patch = _bulk_request(body)
    result = monitor_service.bulk_action(
        current_user, action, ids, reason=reason, patch=patch, now=now(), settings=settings()
    )
    return {"data": {"action": action, **result}}


def _bulk_request(body: dict[str, Any]) -> tuple[str, list[int], str | None, dict | None]:
    details: dict[str, list[str]] = {}
    unknown = sorted(set(body) - {"action", "monitor_ids", "reason", "settings"})
    for key in unknown:
        details[key] = ["unknown field"]
    action = body.get("action")
    if action not in BULK_ACTIONS:
        details["action"] = [f"must be one of {', '.join(BULK_ACTIONS)}"]
    ids = body.get("monitor_ids")
    if (
        not isinstance(ids, list)
        or not 1 <= len(ids) <= 100
        or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 < i <= monitor_service.MAX_ID
            for i in ids
        )
    ):
        details["monitor_ids"] = ["must be a list of 1 to 100 positive integer ids"]
    reason = body.get("reason")
    if not _valid_reason(reason):
        details["reason"] = [REASON_RULE]
    patch = body.get("settings")
    if action == "update" and not isinstance(patch, dict):
        details["settings"] = ["is required for update and must be an object"]
    elif action != "update" and patch is not None:
        details["settings"] = ["is only accepted with action update"]
    elif action == "update":
        # Judged here too, so one answer names the bad settings with the rest.
        try:
            check_patch_fields(patch, settings())
        except ApiError as exc:
            details.update({f"settings.{k}": v for k, v in exc.details.items()})
            if exc.code != "VALIDATION_ERROR":
                raise ApiError(exc.code, exc.message, details) from None
    if details:
        raise validation_error(details)
    return action, list(dict.fromkeys(ids)), reason or None, patch
