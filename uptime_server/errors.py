"""API errors: one exception type and the HTTP status of each error code.

Every error leaves as ``{"error": {"code", "message", "details"}}`` with the
HTTP status of docs/api.md#error-codes; ``wsgi/errors.py`` writes it, for
Flask, the fast paths and waitress alike. This module is the foundation's:
code anywhere may raise an ``ApiError``, so it imports nothing of ours.
"""

from __future__ import annotations

from typing import Any

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
    "TEAM_NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "NOTIFICATION_NOT_ACTIVE": 409,
    "MONITOR_ALREADY_PAUSED": 409,
    "MONITOR_NOT_PAUSED": 409,
    "MONITOR_TYPE_NOT_SUPPORTED": 409,
    "IDENTITY_IN_USE": 409,
    "EMAIL_IN_USE": 409,
    "SLUG_TAKEN": 409,
    "LAST_OWNER": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "RATE_LIMIT_EXCEEDED": 429,
    "INTERNAL_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
    "TEST_RUN_TIMEOUT": 504,
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
