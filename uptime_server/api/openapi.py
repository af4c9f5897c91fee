"""The OpenAPI 3.1 document of the whole API, served at /api/v1/openapi.json.

Paths follow api.md and decisions.md (``openapi_paths``); schemas come from
the validation models and ``openapi_schemas``. The document is built per app
from its settings (the minimum check interval and the known locations are
part of the request schemas) and cached on first use.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify

from uptime_server import __version__
from uptime_server.api.access import public
from uptime_server.api.openapi_paths import (
    auth_paths,
    monitor_paths,
    notification_paths,
    service_paths,
)
from uptime_server.api.openapi_schemas import JSON, components, error_schema
from uptime_server.config import Settings
from uptime_server.errors import STATUS_BY_CODE

bp = Blueprint("openapi", __name__)

ERROR_TEXT = {
    400: "Invalid request: VALIDATION_ERROR (details name the fields), INVALID_JSON, ...",
    401: "No valid session",
    403: "Cross-origin request refused, quota exceeded, or sign-up closed",
    404: "No such resource, or one of another user",
    405: "Method not allowed on this resource (with an Allow header)",
    409: "The resource is not in a state that allows this",
    413: "Request body over 1 MiB",
    429: "Rate limit exceeded; retry after Retry-After seconds",
    500: "Internal error (no details are disclosed)",
    504: "A test run did not finish within UPTIME_TEST_RUN_TIMEOUT; nothing was recorded",
}
RATE_HEADERS = {
    "Retry-After": "Seconds until the limit resets",
    "X-RateLimit-Limit": "Requests allowed in the window",
    "X-RateLimit-Remaining": "Requests left in the window",
    "X-RateLimit-Reset": "Epoch seconds when the window resets",
}


def _error_responses() -> JSON:
    out: JSON = {}
    for status, text in ERROR_TEXT.items():
        codes = sorted(code for code, st in STATUS_BY_CODE.items() if st == status)
        response: JSON = {
            "description": text,
            "content": {"application/json": {"schema": error_schema(codes)}},
        }
        if status == 429:
            response["headers"] = {
                name: {"description": desc, "schema": {"type": "integer"}}
                for name, desc in RATE_HEADERS.items()
            }
        out[f"E{status}"] = response
    return out


def build_document(settings: Settings) -> JSON:
    paths: JSON = {}
    for part in (auth_paths, monitor_paths, notification_paths, service_paths):
        paths.update(part())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "uptime",
            "version": __version__,
            "description": "Self-hosted HTTP/HTTPS uptime monitor. Every endpoint needs the "
            "session cookie unless marked otherwise. Errors: {error: {code, message, details}}.",
        },
        "servers": [{"url": "/"}],
        "security": [{"session": []}],
        "tags": [{"name": n} for n in ("auth", "monitors", "notifications", "service")],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "session_cookie"},
                "metricsToken": {"type": "http", "scheme": "bearer"},
            },
            "schemas": components(settings),
            "responses": _error_responses(),
        },
    }


@bp.get("/openapi.json")
@public
def openapi_json() -> Any:
    from uptime_server.context import settings

    document = current_app.extensions.get("uptime_openapi")
    if document is None:
        document = current_app.extensions["uptime_openapi"] = build_document(settings())
    return jsonify(document)
