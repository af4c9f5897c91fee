"""API errors: one exception type, one JSON renderer for every error.

Every error leaves as ``{"error": {"code", "message", "details"}}`` (the
``schemas.errors.Error`` model) with the HTTP status of docs/api.md#error-codes,
including the framework's own 404/405/413/500
and malformed JSON.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from uptime_server.schemas.base import json_response
from uptime_server.schemas.errors import Error, ErrorBody

log = logging.getLogger(__name__)

STATUS_BY_CODE: dict[str, int] = {
    "VALIDATION_ERROR": 400,
    "INVALID_MONITOR_TYPE": 400,
    "OAUTH_STATE_MISMATCH": 400,
    "OAUTH_ERROR": 400,
    "INVALID_JSON": 400,
    "UNAUTHORIZED": 401,
    "INSUFFICIENT_PERMISSIONS": 403,
    "FORBIDDEN": 403,
    "QUOTA_EXCEEDED": 403,
    "SIGNUP_CLOSED": 403,
    "MONITOR_NOT_FOUND": 404,
    "NOTIFICATION_NOT_FOUND": 404,
    "CHANNEL_NOT_FOUND": 404,
    "PROVIDER_NOT_FOUND": 404,
    "TOKEN_NOT_FOUND": 404,
    "MAINTENANCE_NOT_FOUND": 404,
    "NOT_FOUND": 404,
    "STATUS_PAGE_NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "NOTIFICATION_NOT_ACTIVE": 409,
    "MONITOR_ALREADY_PAUSED": 409,
    "MONITOR_NOT_PAUSED": 409,
    "MONITOR_TYPE_NOT_SUPPORTED": 409,
    "IDENTITY_IN_USE": 409,
    "EMAIL_IN_USE": 409,
    "SLUG_TAKEN": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "RATE_LIMIT_EXCEEDED": 429,
    "INTERNAL_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
    "TEST_RUN_TIMEOUT": 504,
}

_HTTP_FALLBACK = {
    400: ("INVALID_JSON", "Request body is not valid JSON"),
    404: ("NOT_FOUND", "No such resource"),
    405: ("METHOD_NOT_ALLOWED", "Method not allowed on this resource"),
    413: ("PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB"),
    429: ("RATE_LIMIT_EXCEEDED", "Too many requests"),
}


class ApiError(Exception):
    """An error the API reports to its caller."""

    def __init__(
        self,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}

    @property
    def status(self) -> int:
        return STATUS_BY_CODE[self.code]


def validation_error(details: dict[str, list[str]], message: str | None = None) -> ApiError:
    fields = ", ".join(sorted(details))
    return ApiError("VALIDATION_ERROR", message or f"Invalid value for: {fields}", details)


def monitor_not_found() -> ApiError:
    return ApiError("MONITOR_NOT_FOUND", "Monitor not found")


def render(error: ApiError) -> Response:
    body = ErrorBody(code=error.code, message=error.message, details=error.details)
    response = json_response(Error(error=body))
    response.status_code = error.status
    for name, value in error.headers.items():
        response.headers[name] = value
    # Kept for the app's last response hook: Flask-Limiter rewrites Retry-After
    # on every limited response, and the error's own value must win.
    response.error_headers = dict(error.headers)  # type: ignore[attr-defined]
    return response


def register(app: Flask) -> None:
    app.register_error_handler(ApiError, render)
    app.register_error_handler(HTTPException, _from_http)
    app.register_error_handler(Exception, unexpected)


def _from_http(exc: HTTPException) -> Response:
    code, message = _HTTP_FALLBACK.get(exc.code or 500, ("INTERNAL_ERROR", "Internal error"))
    if exc.code == 400 and "JSON" not in (exc.description or "") and code == "INVALID_JSON":
        code, message = "VALIDATION_ERROR", "Bad request"
    headers = {}
    if exc.code == 405 and getattr(exc, "valid_methods", None):
        headers["Allow"] = ", ".join(exc.valid_methods)
    response = render(ApiError(code, message, headers=headers))
    if code not in STATUS_BY_CODE or STATUS_BY_CODE[code] != exc.code:
        response.status_code = exc.code or 500
    return response


def unexpected(exc: Exception) -> Response:
    """500 for an error nobody expected, with its traceback in the log."""
    log.exception("unhandled error")
    return render(ApiError("INTERNAL_ERROR", "Internal error"))
