"""Pass rules of one attempt and the error strings a failed attempt carries.

Pure functions: no I/O, so the wording of every error is testable on its own.
"""

from __future__ import annotations

import errno
import functools
import json
import socket
import ssl
from typing import TYPE_CHECKING, Any

import aiohttp
from jsonpath_ng.ext import parse as parse_json_path

from uptime_server.engine.guard import TARGET_NOT_ALLOWED, RefusedAtConnect, TargetNotAllowed

if TYPE_CHECKING:
    from jsonpath_ng import JSONPath

    from uptime_server.engine.probe import CheckSpec

# Errors are stored and mailed; a 1 KiB expected_content must not make them huge.
_QUOTE_LIMIT = 100

_OS_ERRORS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "connection timed out",
}


class ProbeFailure(Exception):
    """A failed attempt whose message is already the human error string."""


def validate_json_path(expr: str) -> str | None:
    """An error message if `expr` is not a JSONPath jsonpath-ng can run, else None."""
    if not expr or not expr.strip():
        return "JSONPath is empty"
    try:
        _compiled(expr)
    except Exception as exc:  # jsonpath-ng raises several unrelated types
        return f"invalid JSONPath: {exc}"
    return None


@functools.lru_cache(maxsize=1024)
def _compiled(expr: str) -> JSONPath:
    # Parsing goes through PLY and is slow; monitors reuse the same few paths.
    return parse_json_path(expr)


def evaluate(spec: CheckSpec, status: int, body: bytes, charset: str | None) -> str | None:
    """The first pass rule (decisions §1) the response breaks, as an error; None if it passes."""
    if status not in spec.expected_status:
        codes = ", ".join(str(code) for code in spec.expected_status)
        return f"expected status in [{codes}], got {status}"
    if spec.expected_content or spec.excluded_content:
        text = _decode(body, charset)
        if spec.expected_content and spec.expected_content not in text:
            return f'expected content "{_quote(spec.expected_content)}" not found'
        if spec.excluded_content and spec.excluded_content in text:
            return f'excluded content "{_quote(spec.excluded_content)}" found'
    if spec.json_path:
        return _check_json(spec.json_path, spec.expected_json_value, body)
    return None


def _check_json(path: str, expected: str | None, body: bytes) -> str | None:
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return "response is not JSON"
    try:
        matches = _compiled(path).find(document)
    except Exception as exc:  # a bad path or an evaluation error in an extension
        return f"JSONPath {path}: {exc}"
    if not matches:
        return f"JSONPath {path}: no match"
    if expected is None:
        return None
    got = render_json_value(matches[0].value)
    if got != expected:
        return f'JSONPath {path}: expected "{_quote(expected)}", got "{_quote(got)}"'
    return None


def render_json_value(value: Any) -> str:
    """A JSON string by its value; anything else by its JSON text (`true`, `42`, `null`)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_LIMIT else text[: _QUOTE_LIMIT - 1] + "…"


def describe_error(exc: BaseException, timeout: int) -> str:
    """The short human error for an exception raised by an attempt."""
    if isinstance(exc, ProbeFailure | TargetNotAllowed):
        return str(exc)
    if isinstance(exc, TimeoutError):  # aiohttp's timeouts subclass it too
        return f"timeout after {timeout}s"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"TLS certificate verify failed: {_cert_reason(exc.certificate_error)}"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        return f"TLS handshake failed: {_ssl_reason(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _connect_error(exc)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server disconnected"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "incomplete response body"
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"invalid HTTP response: {exc.message}"
    if isinstance(exc, aiohttp.InvalidURL):
        return "invalid URL"
    if isinstance(exc, ValueError):  # e.g. a header value aiohttp will not send
        return f"invalid request: {exc}"
    if isinstance(exc, OSError):
        return _os_error(exc)
    return f"check failed: {type(exc).__name__}"


def _connect_error(exc: aiohttp.ClientConnectorError) -> str:
    cause = exc.os_error
    if isinstance(cause, RefusedAtConnect) or TARGET_NOT_ALLOWED in str(cause):
        return TARGET_NOT_ALLOWED
    if isinstance(cause, socket.gaierror):
        return f"DNS lookup failed: {exc.host}"
    return _os_error(cause)


def _os_error(exc: OSError) -> str:
    known = _OS_ERRORS.get(exc.errno or 0)
    if known:
        return known
    return f"connection failed: {exc.strerror or exc}"


def _cert_reason(exc: Exception) -> str:
    reason = getattr(exc, "verify_message", None) or getattr(exc, "reason", None) or str(exc)
    return str(reason).rstrip(".")


def _ssl_reason(exc: OSError) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return exc.reason.lower().replace("_", " ")
    return str(exc)
