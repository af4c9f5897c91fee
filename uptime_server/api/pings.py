"""Heartbeat pings: /ping/{token}[/start|/fail|/log|/{exit_code}] (docs/api.md#pings).

No session: the token in the path is the credential. Any of GET, POST and
HEAD; the body (POST) is kept, up to 10 KB, as the ping's message, with the
source address and user agent. A paused monitor answers 200 and records
nothing; an unknown token is 404 NOT_FOUND in the usual error shape. Limited
per token (``UPTIME_PING_RATE_LIMIT``), not per address: many jobs on one
host each have their own budget, and one runaway job only spends its own.
Unknown tokens are limited per address (``UPTIME_UNKNOWN_PING_RATE_LIMIT``),
or made-up tokens would each bring a fresh budget (``ping_wsgi.PingLimit``).

``ping_wsgi.PingDispatcher``, in front of Flask, answers nearly every ping
itself; these routes describe the endpoints in the OpenAPI document, answer
the other methods (405), and answer what the dispatcher hands on (a chunked
body) through the dispatcher's own ``answer``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from uptime_server.api.access import ping_limited, public
from uptime_server.api.operations import documented, query
from uptime_server.context import state
from uptime_server.engine.pings import MAX_MESSAGE

bp = Blueprint("pings", __name__)

OK_RESPONSE = {"description": "Recorded", "content": {"text/plain": {"schema": {"type": "string"}}}}
TOKEN = {**query("token", {"type": "string", "maxLength": 64}), "in": "path", "required": True}
SUFFIX = {
    **query(
        "kind",
        {"type": "string", "pattern": "^(start|fail|log|[0-9]{1,3})$"},
        "start, fail, log, or the job's exit code (0 is success, 1..255 failure)",
    ),
    "in": "path",
    "required": True,
}


def _ping_doc(op_id: str, *params: dict[str, Any]) -> Any:
    return documented(op_id, tag="pings", ok={200: OK_RESPONSE}, errors=(404, 503), params=params)


def _handle(token: str, suffix: str | None = None) -> Any:
    dispatcher = state().pings
    status, headers, body = dispatcher.answer(
        request.environ,
        token,
        suffix,
        lambda: request.get_data(cache=False)[:MAX_MESSAGE],
    )
    return Response(body, status, headers)


@bp.get("/ping/<token>")
@public
@ping_limited
@_ping_doc("ping", TOKEN)
def ping(token: str) -> Any:
    """Report a successful run."""
    return _handle(token)


@bp.post("/ping/<token>")
@public
@ping_limited
@_ping_doc("pingPost", TOKEN)
def ping_post(token: str) -> Any:
    """Report a successful run, with a message as the body."""
    return _handle(token)


@bp.get("/ping/<token>/<kind>")
@public
@ping_limited
@_ping_doc("pingKind", TOKEN, SUFFIX)
def ping_kind(token: str, kind: str) -> Any:
    """Report a start, a failure, an exit code or a log line."""
    return _handle(token, kind)


@bp.post("/ping/<token>/<kind>")
@public
@ping_limited
@_ping_doc("pingKindPost", TOKEN, SUFFIX)
def ping_kind_post(token: str, kind: str) -> Any:
    """Report a start, a failure, an exit code or a log line, with a message as the body."""
    return _handle(token, kind)
