"""Liveness and readiness: GET /healthz (no auth).

200 only when this process can use the database and, where it runs the
engine, the engine is doing its work (``engine.health``); otherwise 503 with
a ``reason``. The answer is public: it says how many probe agents are
degraded, never which.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from flask import Blueprint

from uptime_server.db.outages import OUTAGES, unavailable
from uptime_server.engine.dispatcher import scheduler_lag
from uptime_server.fast_paths.health import Remembered
from uptime_server.schemas.service import AgentCounts, Health
from uptime_server.services.agents import degraded_agents
from uptime_server.wsgi.access import public
from uptime_server.wsgi.context import now, state
from uptime_server.wsgi.operations import documented, json_response

log = logging.getLogger(__name__)
bp = Blueprint("health", __name__)
HEALTH_REF = {"$ref": "#/components/schemas/Health"}
DATABASE_DOWN = "the database cannot be reached"


def scheduler_lag_seconds() -> float:
    """Without a scheduler in this process: the lag the database shows, all locations."""
    return scheduler_lag(now())


@bp.get("/healthz")
@public
@documented(
    "healthz",
    tag="service",
    ok={
        200: Health,
        503: json_response(
            HEALTH_REF, "The database is unavailable, or the engine is not doing its work"
        ),
    },
    limited=False,
)
def healthz() -> Any:
    """Liveness, database health and, where this process runs checks, the engine's."""
    # The scheduler of this process knows its own lag (claimed, not started);
    # without one, the database's oldest unclaimed due check tells. Either
    # reads the database, so it doubles as the database check.
    asked_at, at = now(), time.monotonic()
    memo = state().health_memo
    last: Remembered | None = memo.get("last")
    if last is not None and last.fresh(asked_at, at):
        return last.body
    services = state().services
    lag_of = services.get("scheduler_lag") or scheduler_lag_seconds
    engine_health = services.get("engine_health")
    memo.pop("last", None)
    try:
        lag = lag_of()
        degraded = len(degraded_agents(asked_at))
        reason = engine_health() if engine_health is not None else None
    except Exception as exc:  # health must answer whatever broke
        if unavailable(exc):
            OUTAGES.failed(exc, "healthz")  # one line per outage, not one per poll
        else:
            log.exception("health check: database unavailable")
        down = Health(
            status="error", database="unavailable", scheduler_lag_seconds=None, reason=DATABASE_DOWN
        )
        return down.to_json(), 503
    OUTAGES.recovered()
    agents = AgentCounts(degraded=degraded) if degraded else None
    if reason is not None:
        stalled = Health(
            status="error", database="ok", scheduler_lag_seconds=lag, reason=reason, agents=agents
        )
        return stalled.to_json(), 503
    body = Health(status="ok", database="ok", scheduler_lag_seconds=lag, agents=agents).to_json()
    # Served again while fresh: by this view, and before Flask by fast_paths/health.py.
    memo["last"] = Remembered(asked_at, at, body)
    return body
