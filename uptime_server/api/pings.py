"""Heartbeat pings: /ping/{token}[/start|/fail|/log|/{exit_code}] (docs/api.md#pings).

No session: the token in the path is the credential. Any of GET, POST and
HEAD; the body (POST) is kept, up to 10 KB, as the ping's message, with the
source address and user agent. A paused monitor answers 200 and records
nothing; an unknown token is 404 NOT_FOUND in the usual error shape. Limited
per token (``UPTIME_PING_RATE_LIMIT``), not per address: many jobs on one
host each have their own budget, and one runaway job only spends its own.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, request

from uptime_server import ping_service
from uptime_server.api.access import ping_limited, public
from uptime_server.api.operations import documented, query
from uptime_server.context import now, settings, state
from uptime_server.errors import ApiError

bp = Blueprint("pings", __name__)

_EXIT_CODE = re.compile(r"^[0-9]{1,3}$")
MAX_EXIT_CODE = 255
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
    return documented(op_id, tag="pings", ok={200: OK_RESPONSE}, errors=(404,), params=params)


def _kind(suffix: str | None) -> tuple[str, int | None]:
    if suffix is None:
        return "success", None
    if suffix in ("start", "fail", "log"):
        return suffix, None
    if _EXIT_CODE.match(suffix) and int(suffix) <= MAX_EXIT_CODE:
        return "exit", int(suffix)
    raise ApiError("NOT_FOUND", "Unknown ping kind: use start, fail, log or an exit code 0..255")


def _handle(token: str, suffix: str | None = None) -> Any:
    kind, exit_code = _kind(suffix)
    monitor = ping_service.find_monitor(token)
    if monitor is None:
        raise ApiError("NOT_FOUND", "Unknown ping token")
    if not monitor["paused"]:
        ping = ping_service.Ping(
            kind=kind,
            exit_code=exit_code,
            body=request.get_data(cache=False)[: ping_service.MAX_MESSAGE],
            source_ip=request.remote_addr,
            user_agent=request.headers.get("User-Agent"),
        )
        at = now()
        outcome = ping_service.outcome_of(monitor, ping, at)
        ping_service.record(outcome, settings(), now=at, sink=state().services.get("ping_sink"))
    return Response("OK\n", 200, mimetype="text/plain")


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
