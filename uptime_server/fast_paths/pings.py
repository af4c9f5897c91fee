"""The ping route: ``/ping/{token}[/{kind}]`` (docs/api.md#pings), answered before Flask.

No session: the token in the path is the credential. Any of GET, POST and
HEAD; the body (POST) is kept, up to 10 KB, as the ping's message, with the
source address and user agent. A paused monitor answers 200 and records
nothing; an unknown token is 404 NOT_FOUND in the usual error shape.

A ping is tiny and there are many, and through Flask, flask-login and
flask-limiter nearly all of its cost was per-request machinery, so this is
the route's only home: ``PingPath.answer`` answers every request under
``/ping/`` whose path names a token, whatever its method, body or error.
The other methods are 405 (with ``Allow``) and OPTIONS the allowed methods,
as Flask answers a route of GET and POST; a path Flask would merge the
slashes of is the same 308 redirect. These come from werkzeug's own router
(``_ROUTES``), asked only off the hot path. A path that names no token
(``/ping/``, ``/ping/a/b/c``) is Flask's 404, as any unknown URL. The
OpenAPI document lists the route from static entries (``api/openapi.py``).

The answer waits for the ping's commit (``PingSink``): a ping answered 200 is
in the database. This process only parses the request, counts it against
the limit and hands the ping over; the token's lookup (unknown: 404, paused:
200 with nothing recorded) and the ping's outcome are the recorder's, a
batch at a time (``heartbeats/batch.py``), off this process's one GIL.

Limits: per token (``UPTIME_PING_RATE_LIMIT``), not per address: many jobs
on one host each have their own budget, and one runaway job only spends its
own. The limiter's own storage and strategy count it, with the keys
flask-limiter would use, so the budget and its headers are those of any
other limited route. Unknown tokens are limited per address
(``UPTIME_UNKNOWN_PING_RATE_LIMIT``, ``PingLimit``). A body is limited as any
request's (``MAX_REQUEST_BODY``: 413 from its declared length).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import IO

from flask import Response
from limits import RateLimitItem, parse_many
from limits.strategies import RateLimiter
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, RequestRedirect, Rule
from werkzeug.wsgi import get_content_length, get_input_stream

from uptime_server.auth.ping_tokens import MAX_TOKEN, token_hash
from uptime_server.db import database
from uptime_server.engine import ping_sink as ping_service
from uptime_server.errors import ApiError
from uptime_server.heartbeats import batch as pings
from uptime_server.heartbeats import kinds
from uptime_server.wsgi.context import AppState
from uptime_server.wsgi.errors import (
    HTTP_FALLBACK,
    error_answer,
    error_body,
    http_error,
    status_line,
)
from uptime_server.wsgi.types import MAX_REQUEST_BODY, RESPONSE_HEADERS, Answer, Environ, Headers

log = logging.getLogger(__name__)

PREFIX = "/ping/"
METHODS = frozenset(("GET", "POST", "HEAD"))
RETRY_UNRECORDED = 1  # seconds: Retry-After of a ping the writer could not record

_OK = b"OK\n"
_COMMON: Headers = [("Vary", "Cookie"), *RESPONSE_HEADERS.items()]
# The route's shapes and methods, as Flask registered a route of GET and POST
# (HEAD with GET, OPTIONS answered by the router): for what is not a plain ping.
_ROUTES = Map(
    [
        Rule(path, methods=("GET", "POST", "HEAD", "OPTIONS"), endpoint="ping")
        for path in ("/ping/<token>", "/ping/<token>/<kind>")
    ]
)
_TOO_LARGE = error_answer(ApiError(*HTTP_FALLBACK[413]))


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


class PingPath:
    segments = ("ping",)

    def __init__(self, uptime: AppState, limit: PingLimit) -> None:
        self.uptime = uptime
        self.limit = limit

    def answer(self, environ: Environ) -> Answer | None:
        path: str = environ.get("PATH_INFO", "")
        if not path.startswith(PREFIX):
            return None
        parts = path[len(PREFIX) :].split("/")
        method = environ.get("REQUEST_METHOD")
        if (
            method not in METHODS
            or not parts[0]
            or len(parts) > 2
            or (len(parts) == 2 and not parts[1])
        ):
            return _routed(environ)
        declared = environ.get("CONTENT_LENGTH") or ""
        if not declared and "HTTP_TRANSFER_ENCODING" not in environ:
            read_body = _no_body
        elif declared.isdigit() and int(declared) <= MAX_REQUEST_BODY:
            read_body = partial(environ["wsgi.input"].read, min(int(declared), pings.MAX_MESSAGE))
        elif _too_large(environ):
            return _TOO_LARGE
        else:  # a chunked body, or a length that is no number: read as Flask would
            read_body = partial(
                _whole, get_input_stream(environ, max_content_length=MAX_REQUEST_BODY)
            )
        # WSGI paths are latin-1 decoded bytes; Flask read them as UTF-8.
        token, *suffix = (p.encode("latin-1").decode("utf-8", "replace") for p in parts)
        status, headers, body = self.ping(environ, token, suffix[0] if suffix else None, read_body)
        headers = [("Content-Length", str(len(body))), *headers, *_COMMON]
        return (status_line(status), headers, body)

    def ping(
        self,
        environ: Environ,
        token: str,
        suffix: str | None,
        read_body: Callable[[], bytes],
    ) -> tuple[int, Headers, bytes]:
        """Status, headers and body of a ping."""
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
        kind = kinds.kind_of(suffix)
        if kind is None:
            return _error(404, "NOT_FOUND", kinds.UNKNOWN_KIND, limit_headers)
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
        environ: Environ,
        hashed: str,
        kind: tuple[str, int | None],
        read_body: Callable[[], bytes],
    ) -> str:
        """Hand the ping over (a ``PingIn``); its answer once it is committed.

        The token's lookup and the ping's outcome are the recorder's
        (heartbeats/batch.py), a batch at a time: this process, whose one GIL
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


def _no_body() -> bytes:
    return b""


def _whole(stream: IO[bytes]) -> bytes:
    return stream.read()[: pings.MAX_MESSAGE]


def _too_large(environ: Environ) -> bool:
    """Whether the declared body is over the limit (the app's ``_refuse_large_body``)."""
    length = get_content_length(environ)
    return length is not None and length > MAX_REQUEST_BODY


def _routed(environ: Environ) -> Answer | None:
    """What Flask answered a request of the route that is no plain ping: a 405, an
    OPTIONS, a 308 to the path with its slashes merged; None for a path of no token."""
    adapter = _ROUTES.bind_to_environ(environ)
    try:
        adapter.match()
    except NotFound:
        return None  # Flask's 404, as for any URL it does not know
    except MethodNotAllowed as exc:
        if _too_large(environ):  # Flask refuses the body before it routes
            return _TOO_LARGE
        error, status = http_error(exc)
        return error_answer(error, status)
    except RequestRedirect as redirect:
        if _too_large(environ):
            return _TOO_LARGE
        return _as_flask_sends(redirect.get_response(environ), environ)
    if _too_large(environ):
        return _TOO_LARGE
    options = Response()  # Flask's default OPTIONS answer
    options.allow.update(adapter.allowed_methods())
    return _as_flask_sends(options, environ)


def _as_flask_sends(response: Response, environ: Environ) -> Answer:
    """*response* with the headers Flask's app adds to every answer, as it is sent."""
    for name, value in RESPONSE_HEADERS.items():
        response.headers.setdefault(name, value)
    response.vary.add("Cookie")  # Flask's session machinery
    headers = response.get_wsgi_headers(environ).to_wsgi_list()
    return (response.status, headers, response.get_data())


def _error(status: int, code: str, message: str, headers: Headers) -> tuple[int, Headers, bytes]:
    return status, [("Content-Type", "application/json"), *headers], error_body(code, message)
