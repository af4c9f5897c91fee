"""The one error writer: ``{"error": {code, message, details}}`` (docs/api.md#error-codes).

Whoever answers writes an error through here: Flask's error handlers
(``register``), the fast paths (``error_body``, ``error_answer``) and
waitress's own refusals (``server.JsonErrorTask``). The body is pydantic's
serialisation of ``schemas.errors.Error``, compact, with one newline, as
every JSON answer of the API (``schemas.base.json_response``); the status
line is werkzeug's, as Flask sends it.
"""

from __future__ import annotations

import logging
from functools import lru_cache

from flask import Flask, Response
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from uptime_server.errors import STATUS_BY_CODE, ApiError
from uptime_server.schemas.errors import Error, ErrorBody
from uptime_server.wsgi.types import RESPONSE_HEADERS, Answer

log = logging.getLogger(__name__)

# The code and message of an error werkzeug raises (routing, body limits).
HTTP_FALLBACK = {
    400: ("INVALID_JSON", "Request body is not valid JSON"),
    404: ("NOT_FOUND", "No such resource"),
    405: ("METHOD_NOT_ALLOWED", "Method not allowed on this resource"),
    413: ("PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB"),
    429: ("RATE_LIMIT_EXCEEDED", "Too many requests"),
}
# What Flask's session machinery adds to every answer of the app.
_SESSION_VARY = ("Vary", "Cookie")


def error_body(code: str, message: str, details: dict[str, list[str]] | None = None) -> bytes:
    """The bytes of an error's body."""
    if not details:
        return _plain_body(code, message)
    body = ErrorBody(code=code, message=message, details=details)
    return Error(error=body).model_dump_json().encode() + b"\n"


@lru_cache(maxsize=256)
def _plain_body(code: str, message: str) -> bytes:
    # The fast paths answer the same few errors over and over (unknown ping tokens).
    body = ErrorBody(code=code, message=message, details={})
    return Error(error=body).model_dump_json().encode() + b"\n"


@lru_cache(maxsize=64)
def status_line(status: int) -> str:
    """``404 NOT FOUND``: the status line werkzeug writes."""
    return f"{status} {HTTP_STATUS_CODES.get(status, 'UNKNOWN').upper()}"


def error_answer(error: ApiError, status: int | None = None) -> Answer:
    """*error* as the app's Flask handler sends it, headers in its order (for a fast path)."""
    body = error_body(error.code, error.message, error.details)
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        *error.headers.items(),
        *RESPONSE_HEADERS.items(),
        _SESSION_VARY,
    ]
    return (status_line(status or error.status), headers, body)


def render(error: ApiError) -> Response:
    """*error* as Flask's answer (the handler of ``ApiError``)."""
    response = Response(
        error_body(error.code, error.message, error.details), mimetype="application/json"
    )
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


def http_error(exc: HTTPException) -> tuple[ApiError, int]:
    """The API's error for an error werkzeug raised, and the status it is sent with."""
    code, message = HTTP_FALLBACK.get(exc.code or 500, ("INTERNAL_ERROR", "Internal error"))
    if exc.code == 400 and "JSON" not in (exc.description or "") and code == "INVALID_JSON":
        code, message = "VALIDATION_ERROR", "Bad request"
    headers = {}
    if exc.code == 405 and getattr(exc, "valid_methods", None):
        headers["Allow"] = ", ".join(exc.valid_methods)
    error = ApiError(code, message, headers=headers)
    status = error.status
    if code not in STATUS_BY_CODE or STATUS_BY_CODE[code] != exc.code:
        status = exc.code or 500
    return error, status


def _from_http(exc: HTTPException) -> Response:
    error, status = http_error(exc)
    response = render(error)
    response.status_code = status
    return response


def unexpected(exc: Exception) -> Response:
    """500 for an error nobody expected, with its traceback in the log."""
    log.exception("unhandled error")
    return render(ApiError("INTERNAL_ERROR", "Internal error"))
