"""JSON Schemas of the OpenAPI document: request bodies and response objects.

Request bodies come from the pydantic models that validate them
(``MonitorConfig``, ``AlertSettingsIn``), with the settings-bound rules
(minimum check interval, known locations) filled in from the running server,
so the document cannot drift from validation. Response objects are written
out here; the schemathesis test checks every response against them.
"""

from __future__ import annotations

import copy
from typing import Any

from uptime_server.config import Settings
from uptime_server.errors import STATUS_BY_CODE
from uptime_server.models import MONITOR_TYPES, STATUSES
from uptime_server.validation import AlertSettingsIn, MonitorConfig

JSON = dict[str, Any]

TIME = {
    "type": "string",
    "format": "date-time",
    "description": "ISO 8601 UTC, e.g. 2026-01-31T12:00:00Z",
}
TIME_OR_NULL = {"type": ["string", "null"], "format": "date-time"}
INT_OR_NULL = {"type": ["integer", "null"]}
STR_OR_NULL = {"type": ["string", "null"]}
PERCENT_OR_NULL = {"type": ["number", "null"], "minimum": 0, "maximum": 100}
RUN_STATUSES = ["online", "warning", "offline"]


def ref(name: str) -> JSON:
    return {"$ref": f"#/components/schemas/{name}"}


def obj(properties: JSON, *, required: list[str] | None = None, closed: bool = True) -> JSON:
    """An object schema; every property is required unless *required* says otherwise."""
    schema: JSON = {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


def data_of(schema: JSON, **extra: JSON) -> JSON:
    return obj({"data": schema, **extra})


def _pydantic_schema(model: type, settings: Settings) -> JSON:
    schema = copy.deepcopy(model.model_json_schema(ref_template="#/components/schemas/{model}"))
    _strip_titles(schema)
    props = schema["properties"]
    if "check_interval" in props:
        props["check_interval"]["minimum"] = settings.min_check_interval
    if "locations" in props:
        array = props["locations"]["anyOf"][0]
        array["items"] = {"type": "string", "enum": list(settings.locations)}
    if "url" in props:
        props["url"]["anyOf"][0].update({"format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"})
    return schema


def _strip_titles(node: Any) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            node.pop("title")
        for value in node.values():
            _strip_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


def _without_defaults(schema: JSON) -> JSON:
    """The same object schema with nothing required and no defaults: a PUT body."""
    out = copy.deepcopy(schema)
    out.pop("required", None)
    for prop in out["properties"].values():
        prop.pop("default", None)
    return out


def monitor_create(settings: Settings) -> JSON:
    schema = _pydantic_schema(MonitorConfig, settings)
    schema["description"] = "A new monitor. Omitted fields take the defaults shown."
    # url is required for the checked types, and must be https for type https.
    schema["allOf"] = [
        {
            "if": {"properties": {"type": {"enum": ["http", "https"]}}, "required": ["type"]},
            "then": {"required": ["url"], "properties": {"url": {"type": "string"}}},
        },
        {
            "if": {"properties": {"type": {"const": "https"}}, "required": ["type"]},
            "then": {"properties": {"url": {"pattern": "^[Hh][Tt][Tt][Pp][Ss]://"}}},
        },
    ]
    schema["examples"] = [
        {"name": "api-prod", "url": "https://example.com/health", "type": "https"},
    ]
    return schema


def monitor_update(settings: Settings) -> JSON:
    schema = _without_defaults(_pydantic_schema(MonitorConfig, settings))
    schema["description"] = (
        "Any subset of the monitor's fields. The monitor as it would be after the "
        "change must be valid as a whole, or nothing changes."
    )
    schema["examples"] = [{"name": "api-prod (EU)", "check_interval": 120}]
    return schema


def alert_settings_update(settings: Settings) -> JSON:
    schema = _without_defaults(_pydantic_schema(AlertSettingsIn, settings))
    schema["description"] = "Any subset of the alert settings."
    schema["examples"] = [{"alert_threshold": 3, "alert_on_recovery": False}]
    return schema


def error_schema(codes: list[str] | None = None) -> JSON:
    code: JSON = {"type": "string", "enum": codes or sorted(STATUS_BY_CODE)}
    details = {
        "type": "object",
        "description": "Field or parameter name → messages (validation errors); {} otherwise.",
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
    }
    return obj({"error": obj({"code": code, "message": {"type": "string"}, "details": details})})


def monitor_properties() -> JSON:
    return {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "url": STR_OR_NULL,
        "type": {"type": "string", "enum": list(MONITOR_TYPES)},
        "method": {"type": "string"},
        "expected_status": {"type": "array", "items": {"type": "integer"}},
        "timeout": {"type": "integer", "description": "Seconds"},
        "check_interval": {"type": "integer", "description": "Seconds"},
        "retry_count": {"type": "integer"},
        "locations": {"type": "array", "items": {"type": "string"}},
        "follow_redirects": {"type": "boolean"},
        "verify_ssl": {"type": "boolean"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": STR_OR_NULL,
        "expected_content": STR_OR_NULL,
        "excluded_content": STR_OR_NULL,
        "json_path": STR_OR_NULL,
        "expected_json_value": STR_OR_NULL,
        "degraded_response_time": INT_OR_NULL,
        "status": {"type": "string", "enum": list(STATUSES)},
        "checks_supported": {"type": "boolean"},
        "paused": {"type": "boolean"},
        "paused_at": TIME_OR_NULL,
        "pause_reason": STR_OR_NULL,
        "uptime_24h": PERCENT_OR_NULL,
        "uptime_7d": PERCENT_OR_NULL,
        "uptime_30d": PERCENT_OR_NULL,
        "response_time": {**INT_OR_NULL, "description": "Milliseconds, of the last run"},
        "status_code": INT_OR_NULL,
        "last_error": STR_OR_NULL,
        "last_check": TIME_OR_NULL,
        "last_success": TIME_OR_NULL,
        "last_failure": TIME_OR_NULL,
        "cert_expires_at": TIME_OR_NULL,
        "next_check_at": TIME_OR_NULL,
        "created_at": TIME,
        "updated_at": TIME,
    }


def _monitor_schemas() -> JSON:
    full = monitor_properties()
    summary_keys = ("id", "name", "url", "type", "status", "paused", "uptime_24h")
    summary = {k: full[k] for k in summary_keys}
    summary["response_time"] = full["response_time"]
    summary["last_check"] = full["last_check"]
    created_keys = ("id", "name", "url", "type", "status", "created_at")
    return {
        "Monitor": obj(full),
        "MonitorSummary": obj(summary),
        "MonitorCreated": obj({k: full[k] for k in created_keys}),
        "MonitorList": obj(
            {
                "data": {"type": "array", "items": ref("MonitorSummary")},
                "pagination": obj(
                    {
                        k: {"type": "integer", "minimum": 0}
                        for k in ("page", "limit", "total", "pages")
                    }
                ),
            }
        ),
        "MonitorMessage": obj({"message": {"type": "string"}, "data": ref("Monitor")}),
        "AlertSettings": obj(
            {
                "email_enabled": {"type": "boolean"},
                "email_recipients": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "slack_enabled": {"type": "boolean"},
                "slack_webhook_url": STR_OR_NULL,
                "alert_on_recovery": {"type": "boolean"},
                "alert_threshold": {"type": "integer", "minimum": 1, "maximum": 100},
            }
        ),
        "BulkRequest": obj(
            {
                "action": {"type": "string", "enum": ["pause", "resume", "delete", "update"]},
                "monitor_ids": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
                    "minItems": 1,
                    "maxItems": 100,
                },
                "reason": {"type": ["string", "null"], "maxLength": 500},
                "settings": {
                    "anyOf": [ref("MonitorUpdate"), {"type": "null"}],
                    "description": "Required for, and only accepted with, action update.",
                },
            },
            required=["action", "monitor_ids"],
        ),
        "BulkResult": data_of(
            obj(
                {
                    "action": {"type": "string", "enum": ["pause", "resume", "delete", "update"]},
                    "succeeded": {"type": "array", "items": {"type": "integer"}},
                    "failed": {
                        "type": "array",
                        "items": obj(
                            {
                                "id": {"type": "integer"},
                                "error": obj(
                                    {"code": {"type": "string"}, "message": {"type": "string"}}
                                ),
                            }
                        ),
                    },
                }
            )
        ),
        "PauseRequest": obj(
            {"reason": {"type": ["string", "null"], "maxLength": 500}}, required=[]
        ),
    }


def _check_schemas() -> JSON:
    return {
        "TestResult": obj(
            {
                "status": {"type": "string", "enum": RUN_STATUSES},
                "response_time": INT_OR_NULL,
                "status_code": INT_OR_NULL,
                "checked_at": TIME,
                "error": STR_OR_NULL,
            },
            required=["status", "response_time", "status_code", "checked_at", "error"],
            closed=False,
        ),
        "CheckRecord": obj(
            {
                "id": {"type": "integer"},
                "checked_at": TIME,
                "status": {"type": "string", "enum": RUN_STATUSES},
                "response_time": INT_OR_NULL,
                "status_code": INT_OR_NULL,
                "error": STR_OR_NULL,
                "location": {"type": "string"},
                "attempts": {"type": "integer", "minimum": 1},
            }
        ),
        "History": obj(
            {
                "data": {"type": "array", "items": ref("CheckRecord")},
                "meta": obj(
                    {
                        "count": {"type": "integer"},
                        "limit": {"type": "integer"},
                        "from": TIME,
                        "to": TIME,
                        "has_more": {"type": "boolean"},
                    }
                ),
            }
        ),
        "Statistics": obj(
            {
                "period": {"type": "string", "enum": ["24h", "7d", "30d", "90d"]},
                "granularity": {"type": "string", "enum": ["5m", "1h", "1d"]},
                "uptime": obj({k: PERCENT_OR_NULL for k in ("24h", "7d", "30d")}),
                "response_times": obj({k: INT_OR_NULL for k in ("avg", "min", "max", "p95")}),
                "incidents": obj(
                    {"count": {"type": "integer"}, "total_downtime": {"type": "integer"}}
                ),
                "checks": obj({k: {"type": "integer"} for k in ("total", "successful", "failed")}),
                "series": {
                    "type": "array",
                    "items": obj(
                        {
                            "start": TIME,
                            "checks": {"type": "integer"},
                            "failed": {"type": "integer"},
                            "uptime": PERCENT_OR_NULL,
                            "avg_response_time": INT_OR_NULL,
                            "p95_response_time": INT_OR_NULL,
                        }
                    ),
                },
            },
            closed=False,
        ),
    }


def _notification_schemas() -> JSON:
    core = {
        "id": {"type": "integer"},
        "monitor_id": {"type": "integer"},
        "type": {"type": "string", "enum": ["downtime", "recovery"]},
        "message": {"type": "string"},
        "status": {"type": "string", "enum": ["active", "resolved"]},
        "started_at": TIME,
        "resolved_at": TIME_OR_NULL,
        "duration": {**INT_OR_NULL, "description": "Seconds; null while active"},
        "notification_method": {"type": "string", "enum": ["email"]},
        "acknowledged": {"type": "boolean"},
        "acknowledged_at": TIME_OR_NULL,
    }
    detail_extra = {
        "monitor_name": {"type": "string"},
        "monitor_url": STR_OR_NULL,
        "email_sent_at": {**TIME_OR_NULL, "description": "null until an email was handed over"},
        "error_details": obj(
            {
                "status_code": INT_OR_NULL,
                "response_time": INT_OR_NULL,
                "error_message": {"type": "string"},
            }
        ),
    }
    page = {k: {"type": "integer", "minimum": 0} for k in ("page", "limit", "total")}
    return {
        "Notification": obj({**core, **detail_extra}, required=list(core), closed=False),
        "NotificationDetail": obj({**core, **detail_extra}, closed=False),
        "ActiveNotifications": obj(
            {
                "data": {"type": "array", "items": ref("Notification")},
                "meta": obj({"count": {"type": "integer"}, "timestamp": TIME}),
            }
        ),
        "RecentNotifications": obj(
            {
                "data": {"type": "array", "items": ref("Notification")},
                "pagination": obj({**page, "has_next": {"type": "boolean"}}),
            }
        ),
        "NotificationList": obj(
            {
                "data": {"type": "array", "items": ref("Notification")},
                "pagination": obj(
                    {
                        **page,
                        "pages": {"type": "integer", "minimum": 0},
                        "has_next": {"type": "boolean"},
                        "has_prev": {"type": "boolean"},
                    }
                ),
            }
        ),
        "Acknowledged": obj(
            {
                "message": {"type": "string"},
                "data": obj(
                    {
                        "id": {"type": "integer"},
                        "acknowledged": {"const": True},
                        "acknowledged_at": TIME,
                    }
                ),
            }
        ),
        "Resolved": obj(
            {
                "message": {"type": "string"},
                "data": obj(
                    {
                        "id": {"type": "integer"},
                        "status": {"const": "resolved"},
                        "resolved_at": TIME,
                    }
                ),
            }
        ),
    }


def _auth_schemas() -> JSON:
    user = obj(
        {
            "id": {"type": "integer"},
            "email": {"type": "string"},
            "name": {"type": "string"},
            "provider": {**STR_OR_NULL, "description": "Provider of this session"},
            "avatar_url": STR_OR_NULL,
            "created_at": TIME,
            "last_login": TIME_OR_NULL,
        }
    )
    return {
        "User": user,
        "CliExchangeRequest": obj(
            {
                "ticket": {"type": "string", "minLength": 1},
                "verifier": {"type": "string", "minLength": 1},
            }
        ),
        "CliExchangeResult": data_of(
            obj({"session": {"type": "string"}, "expires_at": TIME, "user": ref("User")})
        ),
        "Refreshed": obj({"message": {"type": "string"}, "expires_at": TIME}),
        "Message": obj({"message": {"type": "string"}}),
        "Health": obj(
            {
                "status": {"type": "string", "enum": ["ok", "error"]},
                "database": {"type": "string", "enum": ["ok", "unavailable"]},
                "scheduler_lag_seconds": {"type": ["number", "null"], "minimum": 0},
            }
        ),
    }


def components(settings: Settings) -> JSON:
    schemas: JSON = {
        "Error": error_schema(),
        "MonitorCreate": monitor_create(settings),
        "MonitorUpdate": monitor_update(settings),
        "AlertSettingsUpdate": alert_settings_update(settings),
    }
    for part in (_monitor_schemas, _check_schemas, _notification_schemas, _auth_schemas):
        schemas.update(part())
    return schemas
