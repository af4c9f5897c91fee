"""The ping path in front of Flask: ``/ping/{token}[/{kind}]`` answered by a plain WSGI function.

A ping is tiny and there are many: through waitress, Flask, flask-login and
flask-limiter it costs ~2 ms of CPU, nearly all of it per-request machinery,
against ~35 µs for its token lookup. ``PingDispatcher`` wraps ``app.wsgi_app``
(so waitress and Flask's test client both reach it) and answers GET, POST and
HEAD on the ping paths itself, with the same answers as the Flask routes in
``api/pings.py`` describe (those stay registered for the OpenAPI document and
for the 405 of any other method). Anything else, and any ping request out of
the ordinary (a declared body over the request limit, a chunked body),
falls through to Flask.

The answer waits for the ping's commit (``PingSink``): a ping answered 200 is
in the database. This process only parses the request, counts it against
the limit and hands the ping over; the token's lookup (unknown: 404, paused:
200 with nothing recorded) and the ping's outcome are the recorder's, a
batch at a time (``engine/pings.py``), off this process's one GIL. The
per-token rate limit is the limiter's own storage and strategy, with the
keys flask-limiter would use, so the budget and its headers are those of
any other limited route.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from limits import RateLimitItem, parse_many
from limits.strategies import RateLimiter

from uptime_server import ping_service
from uptime_server.context import UptimeState
from uptime_server.db import database
from uptime_server.engine import pings
from uptime_server.http_server import MAX_REQUEST_BODY, RESPONSE_HEADERS
from uptime_server.ping_tokens import MAX_TOKEN, token_hash

log = logging.getLogger(__name__)

PREFIX = "/ping/"
METHODS = frozenset(("GET", "POST", "HEAD"))
RETRY_UNRECORDED = 1  # seconds: Retry-After of a ping the writer could not record

Headers = list[tuple[str, str]]
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_STATUS = {
    200: "200 OK",
    404: "404 NOT FOUND",
    429: "429 TOO MANY REQUESTS",
    500: "500 INTERNAL SERVER ERROR",
    503: "503 SERVICE UNAVAILABLE",
}
_OK = b"OK\n"
_COMMON: Headers = [("Vary", "Cookie"), *RESPONSE_HEADERS.items()]


def error_body(code: str, message: str) -> bytes:
    """The error shape exactly as Flask's ``jsonify`` writes it (compact, one newline)."""
    error = {"error": {"code": code, "message": message, "details": {}}}
    return json.dumps(error, separators=(",", ":")).encode() + b"\n"


class PingLimit:
    """``UPTIME_PING_RATE_LIMIT`` (then the per-session budget) counted per token, and
    ``UPTIME_UNKNOWN_PING_RATE_LIMIT``, pings of unknown tokens counted per address.

    A made-up token has a budget of its own like any token, so without the
    second limit one client could have the ping path look up tokens as fast
    as it can send them. An address past its budget of unknown tokens is
    refused before any lookup (its known tokens too: which is which is only
    learnt from the lookup); other addresses, and their tokens, are not
    touched by it.
    """

    def __init__(
        self,
        strategy: RateLimiter,
        ping_limit: str | None,
        app_limit: str | None,
        unknown_limit: str | None = None,
    ) -> None:
        self.strategy = strategy
        # (item, scope) in flask-limiter's order: the route's shared "ping"
        # limit, then the application-wide one, both keyed by the token.
        self.items: list[tuple[RateLimitItem, str]] = [
            *((item, "ping") for item in (parse_many(ping_limit) if ping_limit else [])),
            *((item, "global") for item in (parse_many(app_limit) if app_limit else [])),
        ]
        self.unknown: list[RateLimitItem] = parse_many(unknown_limit) if unknown_limit else []

    def hit(self, hashed: str) -> tuple[bool, Headers]:
        """Count a ping of the token of hash *hashed*: whether it is allowed, and the headers."""
        if not self.items:
            return True, []
        key = "ping:" + hashed
        shown, allowed = self.items[0], True
        for item, scope in self.items:
            if not self.strategy.hit(item, key, scope):
                shown, allowed = (item, scope), False
                break
        return allowed, self._headers(*shown, key)

    def unknown_refused(self, address: str) -> Headers | None:
        """The 429's headers when *address* has spent its budget of unknown tokens, else None."""
        key = _UNKNOWN_SCOPE + ":" + address
        for item in self.unknown:
            if not self.strategy.test(item, key, _UNKNOWN_SCOPE):
                return self._headers(item, _UNKNOWN_SCOPE, key)
        return None

    def hit_unknown(self, address: str) -> None:
        """Count a ping of an unknown token against *address*."""
        key = _UNKNOWN_SCOPE + ":" + address
        for item in self.unknown:
            self.strategy.hit(item, key, _UNKNOWN_SCOPE)

    def _headers(self, item: RateLimitItem, scope: str, key: str) -> Headers:
        stats = self.strategy.get_window_stats(item, key, scope)
        reset_at = int(stats.reset_time + 1)
        return [
            ("X-RateLimit-Limit", str(item.amount)),
            ("X-RateLimit-Remaining", str(stats.remaining)),
            ("X-RateLimit-Reset", str(reset_at)),
            ("Retry-After", str(int(reset_at - time.time()))),
        ]


_UNKNOWN_SCOPE = "ping-unknown"


class PingDispatcher:
    def __init__(self, app: WsgiApp, uptime: UptimeState, limit: PingLimit) -> None:
        self.app = app
        self.uptime = uptime
        self.limit = limit

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path: str = environ.get("PATH_INFO", "")
        if not path.startswith(PREFIX) or environ.get("REQUEST_METHOD") not in METHODS:
            return self.app(environ, start_response)
        parts = path[len(PREFIX) :].split("/")
        length = _content_length(environ)
        if not parts[0] or len(parts) > 2 or (len(parts) == 2 and not parts[1]) or length is None:
            return self.app(environ, start_response)  # Flask's 404 / 413 / chunked body
        # WSGI paths are latin-1 decoded bytes; Flask reads them as UTF-8.
        token, *suffix = (p.encode("latin-1").decode("utf-8", "replace") for p in parts)
        read = environ["wsgi.input"].read
        status, headers, body = self.answer(
            environ, token, suffix[0] if suffix else None, lambda: read(_kept(length))
        )
        headers = [("Content-Length", str(len(body))), *headers, *_COMMON]
        start_response(_STATUS[status], headers)
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]

    def answer(
        self,
        environ: dict[str, Any],
        token: str,
        suffix: str | None,
        read_body: Callable[[], bytes],
    ) -> tuple[int, Headers, bytes]:
        """Status, headers and body of a ping (also the Flask routes', for what falls through)."""
        hashed = token_hash(token)  # the limiter's key and the lookup's
        address = environ.get("REMOTE_ADDR") or "unknown"
        try:
            refused = self.limit.unknown_refused(address)
            if refused is not None:
                message = "Too many pings of unknown tokens from this address"
                return _error(429, "RATE_LIMIT_EXCEEDED", message, refused)
            allowed, limit_headers = self.limit.hit(hashed)
        except (
            Exception
        ):  # the limiter's storage (Redis, say) failed: the error shape, not waitress's
            log.exception("rate limit storage failed")
            return _error(500, "INTERNAL_ERROR", "Internal error", [])
        if not allowed:
            return _error(429, "RATE_LIMIT_EXCEEDED", "Too many requests", limit_headers)
        kind = ping_service.kind_of(suffix)
        if kind is None:
            return _error(404, "NOT_FOUND", ping_service.UNKNOWN_KIND, limit_headers)
        if not token or len(token) > MAX_TOKEN:
            return self._unknown(address, limit_headers)
        try:
            answer = self._record(environ, hashed, kind, read_body)
        except ping_service.PingNotRecorded:
            headers = [h for h in limit_headers if h[0] != "Retry-After"]
            headers.append(("Retry-After", str(RETRY_UNRECORDED)))
            return _error(503, "SERVICE_UNAVAILABLE", "Ping not recorded: send it again", headers)
        except Exception:
            log.exception("unhandled error")
            database.close()  # a broken connection is not kept for the next ping
            return _error(500, "INTERNAL_ERROR", "Internal error", limit_headers)
        if answer == pings.UNKNOWN:
            return self._unknown(address, limit_headers)
        if answer == pings.FAILED:
            return _error(500, "INTERNAL_ERROR", "Internal error", limit_headers)
        return 200, [("Content-Type", "text/plain; charset=utf-8"), *limit_headers], _OK

    def _unknown(self, address: str, headers: Headers) -> tuple[int, Headers, bytes]:
        """404 for a token that names no monitor, counted against its sender's address."""
        try:
            self.limit.hit_unknown(address)
        except Exception:  # the storage failed: the answer is still the 404
            log.exception("rate limit storage failed")
        return _error(404, "NOT_FOUND", "Unknown ping token", headers)

    def _record(
        self,
        environ: dict[str, Any],
        hashed: str,
        kind: tuple[str, int | None],
        read_body: Callable[[], bytes],
    ) -> str:
        """Hand the ping over (a ``PingIn``); its answer once it is committed.

        The token's lookup and the ping's outcome are the recorder's
        (engine/pings.py), a batch at a time: this process, whose one GIL
        answers every ping, only parses and waits.
        """
        at = self.uptime.clock.now()
        ping = pings.PingIn(
            token_hash=hashed,
            kind=kind[0],
            exit_code=kind[1],
            body=read_body()[: pings.MAX_MESSAGE],
            source_ip=environ.get("REMOTE_ADDR"),
            user_agent=environ.get("HTTP_USER_AGENT"),
            at=at,
        )
        sink = self.uptime.services.get("ping_sink")
        return ping_service.record(ping, self.uptime.settings, now=at, sink=sink)


def _content_length(environ: dict[str, Any]) -> int | None:
    """The body's declared length (0 without one); None for a body Flask must handle."""
    declared = environ.get("CONTENT_LENGTH") or ""
    if not declared:
        return None if environ.get("HTTP_TRANSFER_ENCODING") else 0
    if not declared.isdigit() or int(declared) > MAX_REQUEST_BODY:
        return None
    return int(declared)


def _kept(length: int) -> int:
    return min(length, pings.MAX_MESSAGE)


def _error(status: int, code: str, message: str, headers: Headers) -> tuple[int, Headers, bytes]:
    return status, [("Content-Type", "application/json"), *headers], error_body(code, message)
