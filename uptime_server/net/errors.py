"""Outbound HTTP failures as short human error strings.

Shared by the probes and the notification channels that speak HTTP. An error
never quotes what the peer sent (a parser's view of a malformed response, a
Location header's host after a redirect): a monitor must not become a way to
read a service one error at a time.
"""

from __future__ import annotations

import errno
import re
import socket
import ssl

import aiohttp

from uptime_server.net.guard import TARGET_NOT_ALLOWED, RefusedAtConnect, TargetNotAllowed

_OS_ERRORS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "connection timed out",
}


class KnownFailure(Exception):
    """A failure whose message is already the human error string."""


def describe_error(exc: BaseException, timeout: int, *, after_response: bool = False) -> str:
    """The short human error for an exception raised by an outbound HTTP request.

    *after_response*: a response of this attempt has arrived (the failure is
    in its body or at a redirect hop). A host or value named from then on may
    come from the target (a Location header), so it is not repeated.
    """
    if isinstance(exc, KnownFailure | TargetNotAllowed):
        return str(exc)
    if isinstance(exc, TimeoutError):  # aiohttp's timeouts subclass it too
        return f"timeout after {timeout}s"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        reason = _cert_reason(exc.certificate_error)
        if after_response:  # "Hostname mismatch, certificate is not valid for '<host>'"
            reason = reason.partition(",")[0]
        return f"TLS certificate verify failed: {reason}"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        return f"TLS handshake failed: {_ssl_reason(exc.os_error)}"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return _connect_error(exc, after_response)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "server disconnected"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "incomplete response body"
    if isinstance(exc, aiohttp.ClientResponseError):
        return _invalid_response(exc.message)
    if isinstance(exc, aiohttp.InvalidURL):
        return "invalid URL"
    if isinstance(exc, ValueError):  # e.g. a header value aiohttp will not send
        return "invalid request" if after_response else f"invalid request: {exc}"
    if isinstance(exc, OSError):
        return _os_error(exc)
    return f"check failed: {type(exc).__name__}"


# aiohttp's parser errors read "<what>:\n\n  b'<the offending bytes>'\n  ^";
# only a <what> made of words is kept, never the bytes.
_PARSER_WHAT = re.compile(r"[A-Za-z][A-Za-z -]{0,60}")


def _invalid_response(message: str) -> str:
    what, sep, _ = str(message).partition(":\n")
    if sep and _PARSER_WHAT.fullmatch(what):
        return f"invalid HTTP response: {what[0].lower()}{what[1:]}"
    if str(message).startswith("Got more than"):  # LineTooLong, which quotes the line
        return "invalid HTTP response: line too long"
    return "invalid HTTP response"


def _connect_error(exc: aiohttp.ClientConnectorError, after_response: bool) -> str:
    cause = exc.os_error
    if isinstance(cause, RefusedAtConnect) or TARGET_NOT_ALLOWED in str(cause):
        return TARGET_NOT_ALLOWED
    if isinstance(cause, socket.gaierror):
        return (
            "DNS lookup failed for the redirect target"
            if after_response
            else (f"DNS lookup failed: {exc.host}")
        )
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
