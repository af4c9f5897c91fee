"""The operations of the OpenAPI document, one builder per resource.

Each operation lists its success responses and, through ``op``, the error
responses every operation of its kind can give (401 and the CSRF 403 for
session endpoints, 400/413 with a body, 429, 500).
"""

from __future__ import annotations

from uptime_server.api.openapi_schemas import JSON, ref
from uptime_server.query_params import INT64_MAX


def _json(schema: JSON, description: str = "OK") -> JSON:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def op(
    op_id: str,
    summary: str,
    tag: str,
    ok: dict[int, JSON],
    *,
    errors: tuple[int, ...] = (),
    params: tuple[JSON, ...] = (),
    body: JSON | None = None,
    body_required: bool = True,
    unsafe: bool = False,
    is_public: bool = False,
    limited: bool = True,
) -> JSON:
    """One operation with the error responses every such operation can give."""
    statuses = set(errors) | {500}
    if limited:
        statuses.add(429)
    if not is_public:
        statuses.add(401)
        if unsafe:
            statuses.add(403)  # the CSRF Origin rule
    if body is not None:
        statuses |= {400, 413}
    responses: JSON = {str(code): response for code, response in ok.items()}
    for status in sorted(statuses):
        responses[str(status)] = {"$ref": f"#/components/responses/E{status}"}
    operation: JSON = {
        "operationId": op_id,
        "summary": summary,
        "tags": [tag],
        "responses": responses,
    }
    if params:
        operation["parameters"] = list(params)
    if body is not None:
        operation["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": body}},
        }
    if is_public:
        operation["security"] = []
    return operation


def query(name: str, schema: JSON, description: str = "") -> JSON:
    param: JSON = {"name": name, "in": "query", "required": False, "schema": schema}
    if description:
        param["description"] = description
    return param


ID_SCHEMA = {"type": "integer", "minimum": 1, "maximum": INT64_MAX}


def path_id(name: str) -> JSON:
    return {"name": name, "in": "path", "required": True, "schema": ID_SCHEMA}


MONITOR_ID = path_id("monitor_id")
NOTIFICATION_ID = path_id("notification_id")
PROVIDER = {
    "name": "provider",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[a-z0-9]+$"},
    "description": "github, google, or another configured provider name",
    "examples": {"github": {"value": "github"}, "google": {"value": "google"}},
}
PAGE = query("page", {"type": "integer", "minimum": 1, "maximum": INT64_MAX, "default": 1})
TIME_QUERY = {"type": "string", "format": "date-time"}


def _limit(default: int, maximum: int) -> JSON:
    return query("limit", {"type": "integer", "minimum": 1, "maximum": maximum, "default": default})


def _redirect(description: str) -> JSON:
    return {
        "description": description,
        "headers": {"Location": {"schema": {"type": "string"}, "required": True}},
    }


def auth_paths() -> JSON:
    login_params = (
        PROVIDER,
        query("next", {"type": "string"}, "Relative path to return to after sign-in"),
        query("cli_redirect", {"type": "string", "format": "uri"}, "CLI loopback redirect"),
        query("cli_challenge", {"type": "string"}, "S256 of the CLI's verifier"),
    )
    callback_params = (
        PROVIDER,
        query("code", {"type": "string"}),
        query("state", {"type": "string"}),
        query("error", {"type": "string"}),
        query("error_description", {"type": "string"}),
    )
    return {
        "/api/v1/auth/{provider}/login": {
            "get": op(
                "login",
                "Start OAuth sign-in (or link a provider while signed in)",
                "auth",
                {302: _redirect("To the provider's consent screen")},
                errors=(400, 404),
                params=login_params,
                is_public=True,
            )
        },
        "/api/v1/auth/{provider}/callback": {
            "get": op(
                "loginCallback",
                "OAuth callback: creates the session",
                "auth",
                {302: _redirect("To `next`, or to the CLI loopback with a ticket")},
                errors=(400, 403, 404, 409),
                params=callback_params,
                is_public=True,
            )
        },
        "/api/v1/auth/cli/exchange": {
            "post": op(
                "cliExchange",
                "Exchange a CLI ticket and verifier for a session",
                "auth",
                {200: _json(ref("CliExchangeResult"))},
                body=ref("CliExchangeRequest"),
                is_public=True,
            )
        },
        "/api/v1/auth/user": {
            "get": op(
                "getUser",
                "The signed-in user",
                "auth",
                {
                    200: _json(
                        {
                            "type": "object",
                            "properties": {"data": ref("User")},
                            "required": ["data"],
                            "additionalProperties": False,
                        }
                    )
                },
            )
        },
        "/api/v1/auth/refresh": {
            "post": op(
                "refreshSession",
                "Extend the session",
                "auth",
                {200: _json(ref("Refreshed"))},
                unsafe=True,
            )
        },
        "/api/v1/auth/logout": {
            "post": op(
                "logout",
                "End the session everywhere",
                "auth",
                {200: _json(ref("Message"))},
                unsafe=True,
            )
        },
    }


def _data(name: str) -> JSON:
    return {
        "type": "object",
        "properties": {"data": ref(name)},
        "required": ["data"],
        "additionalProperties": False,
    }


def monitor_paths() -> JSON:
    list_params = (
        PAGE,
        _limit(25, 100),
        query("status", {"type": "string", "enum": ["online", "offline", "warning", "pending"]}),
        query("type", {"type": "string", "enum": ["http", "https"]}),
        query("search", {"type": "string"}, "Case-insensitive substring of name or URL"),
    )
    one = (MONITOR_ID,)
    return {
        "/api/v1/monitors": {
            "get": op(
                "listMonitors",
                "List the caller's monitors",
                "monitors",
                {200: _json(ref("MonitorList"))},
                errors=(400,),
                params=list_params,
            ),
            "post": op(
                "createMonitor",
                "Create a monitor",
                "monitors",
                {201: _json(_data("MonitorCreated"), "Created")},
                errors=(403,),
                body=ref("MonitorCreate"),
                unsafe=True,
            ),
        },
        "/api/v1/monitors/bulk": {
            "post": op(
                "bulkMonitors",
                "Pause, resume, delete or update many monitors",
                "monitors",
                {200: _json(ref("BulkResult"))},
                body=ref("BulkRequest"),
                unsafe=True,
            ),
        },
        "/api/v1/monitors/{monitor_id}": {
            "get": op(
                "getMonitor",
                "One monitor",
                "monitors",
                {200: _json(_data("Monitor"))},
                errors=(404,),
                params=one,
            ),
            "put": op(
                "updateMonitor",
                "Change some of a monitor's fields",
                "monitors",
                {200: _json(_data("Monitor"))},
                errors=(404,),
                params=one,
                body=ref("MonitorUpdate"),
                unsafe=True,
            ),
            "delete": op(
                "deleteMonitor",
                "Delete a monitor with its history",
                "monitors",
                {200: _json(ref("Message"))},
                errors=(404,),
                params=one,
                unsafe=True,
            ),
        },
        "/api/v1/monitors/{monitor_id}/pause": {
            "post": op(
                "pauseMonitor",
                "Pause checks",
                "monitors",
                {200: _json(ref("MonitorMessage"))},
                errors=(404, 409),
                params=one,
                body=ref("PauseRequest"),
                body_required=False,
                unsafe=True,
            ),
        },
        "/api/v1/monitors/{monitor_id}/resume": {
            "post": op(
                "resumeMonitor",
                "Resume checks",
                "monitors",
                {200: _json(ref("MonitorMessage"))},
                errors=(404, 409),
                params=one,
                unsafe=True,
            ),
        },
        "/api/v1/monitors/{monitor_id}/test": {
            "post": op(
                "testMonitor",
                "Run one check now and record it",
                "monitors",
                {200: _json(_data("TestResult"))},
                errors=(404, 409, 504),
                params=one,
                unsafe=True,
            ),
        },
        "/api/v1/monitors/{monitor_id}/stats": {
            "get": op(
                "getMonitorStats",
                "Uptime and response-time statistics",
                "monitors",
                {200: _json(_data("Statistics"))},
                errors=(400, 404),
                params=(
                    MONITOR_ID,
                    query(
                        "period",
                        {"type": "string", "enum": ["24h", "7d", "30d", "90d"], "default": "24h"},
                    ),
                    query(
                        "granularity",
                        {"type": "string", "enum": ["5m", "1h", "1d"], "default": "1h"},
                    ),
                ),
            ),
        },
        "/api/v1/monitors/{monitor_id}/history": {
            "get": op(
                "getMonitorHistory",
                "Raw check runs, newest first",
                "monitors",
                {200: _json(ref("History"))},
                errors=(400, 404),
                params=(
                    MONITOR_ID,
                    query("from", TIME_QUERY, "Default: 24 hours before `to`"),
                    query("to", TIME_QUERY, "Default: now"),
                    _limit(100, 1000),
                ),
            ),
        },
        "/api/v1/monitors/{monitor_id}/alerts": {
            "get": op(
                "getMonitorAlerts",
                "Alert settings",
                "monitors",
                {200: _json(_data("AlertSettings"))},
                errors=(404,),
                params=one,
            ),
            "put": op(
                "updateMonitorAlerts",
                "Change alert settings",
                "monitors",
                {200: _json(_data("AlertSettings"))},
                errors=(404,),
                params=one,
                body=ref("AlertSettingsUpdate"),
                unsafe=True,
            ),
        },
    }


def notification_paths() -> JSON:
    list_params = (
        PAGE,
        _limit(50, 100),
        query("monitor_id", ID_SCHEMA),
        query("type", {"type": "string", "enum": ["downtime", "recovery"]}),
        query("status", {"type": "string", "enum": ["active", "resolved"]}),
        query("since", TIME_QUERY, "Only notifications started at or after this time"),
    )
    one = (NOTIFICATION_ID,)
    return {
        "/api/v1/notifications": {
            "get": op(
                "listNotifications",
                "Notifications, newest first",
                "notifications",
                {200: _json(ref("NotificationList"))},
                errors=(400,),
                params=list_params,
            ),
        },
        "/api/v1/notifications/active": {
            "get": op(
                "activeNotifications",
                "Unresolved notifications",
                "notifications",
                {200: _json(ref("ActiveNotifications"))},
            ),
        },
        "/api/v1/notifications/recent": {
            "get": op(
                "recentNotifications",
                "Notifications of the last 24 hours",
                "notifications",
                {200: _json(ref("RecentNotifications"))},
                errors=(400,),
                params=(PAGE, _limit(50, 100)),
            ),
        },
        "/api/v1/notifications/{notification_id}": {
            "get": op(
                "getNotification",
                "One notification",
                "notifications",
                {200: _json(_data("NotificationDetail"))},
                errors=(404,),
                params=one,
            ),
        },
        "/api/v1/notifications/{notification_id}/acknowledge": {
            "post": op(
                "acknowledgeNotification",
                "Acknowledge an active notification",
                "notifications",
                {200: _json(ref("Acknowledged"))},
                errors=(404, 409),
                params=one,
                unsafe=True,
            ),
        },
        "/api/v1/notifications/{notification_id}/resolve": {
            "post": op(
                "resolveNotification",
                "Resolve an active notification by hand",
                "notifications",
                {200: _json(ref("Resolved"))},
                errors=(404, 409),
                params=one,
                unsafe=True,
            ),
        },
    }


def service_paths() -> JSON:
    health = ref("Health")
    return {
        "/api/v1/openapi.json": {
            "get": op(
                "openapi",
                "This document",
                "service",
                {200: _json({"type": "object"})},
                is_public=True,
            ),
        },
        "/healthz": {
            "get": op(
                "healthz",
                "Liveness and database health",
                "service",
                {200: _json(health), 503: _json(health, "Database unavailable")},
                is_public=True,
                limited=False,
            ),
        },
        "/metrics": {
            "get": {
                **op(
                    "metrics",
                    "Prometheus metrics",
                    "service",
                    {
                        200: {
                            "description": "Prometheus text format: process and engine "
                            "series; the per-monitor series only with UPTIME_METRICS_TOKEN "
                            "set and sent as a bearer token",
                            "content": {"text/plain": {"schema": {"type": "string"}}},
                        }
                    },
                    errors=(401,),
                    is_public=True,
                    limited=False,
                ),
                # Open unless UPTIME_METRICS_TOKEN is set; then a bearer token.
                "security": [{}, {"metricsToken": []}],
            },
        },
    }
