"""Liveness and readiness: GET /healthz (no auth)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Blueprint, current_app, request

from uptime_server.agents.service import degraded_agents
from uptime_server.api.access import public
from uptime_server.api.operations import documented, json_response
from uptime_server.context import now, state
from uptime_server.engine.dispatcher import scheduler_lag
from uptime_server.health_wsgi import ENVIRON_KEY
from uptime_server.schemas.service import DegradedAgent, Health

log = logging.getLogger(__name__)
bp = Blueprint("health", __name__)
HEALTH_REF = {"$ref": "#/components/schemas/Health"}
# A healthy answer is served again for this long (by the wall clock and the
# app's clock both), so a load balancer polling hard costs no query each time.
HEALTHY_FOR_SECONDS = 1.0


def scheduler_lag_seconds() -> float:
    """Without a scheduler in this process: the lag the database shows, all locations."""
    return scheduler_lag(now())


@bp.get("/healthz")
@public
@documented(
    "healthz",
    tag="service",
    ok={200: Health, 503: json_response(HEALTH_REF, "Database unavailable")},
    limited=False,
)
def healthz() -> Any:
    """Liveness and database health."""
    # The scheduler of this process knows its own lag (claimed, not started);
    # without one, the database's oldest unclaimed due check tells. Either
    # reads the database, so it doubles as the database check.
    asked_at, at = now(), time.monotonic()
    memo: dict[str, Any] = current_app.extensions.setdefault(MEMO, {})
    last: Remembered | None = memo.get("last")
    if last is not None and last.fresh(asked_at, at):
        request.environ[ENVIRON_KEY] = last
        return last.body
    lag_of = state().services.get("scheduler_lag") or scheduler_lag_seconds
    try:
        lag = lag_of()
        degraded = [
            DegradedAgent(id=a.id, name=a.name, location=a.location)
            for a in degraded_agents(asked_at)
        ]
    except Exception:  # health must answer whatever broke
        log.exception("health check: database unavailable")
        memo.pop("last", None)
        down = Health(status="error", database="unavailable", scheduler_lag_seconds=None)
        body = down.to_json()
        del body["degraded_agents"]  # unknown without the database
        return body, 503
    body = Health(
        status="ok", database="ok", scheduler_lag_seconds=lag, degraded_agents=degraded
    ).to_json()
    if not degraded:
        del body["degraded_agents"]
    memo["last"] = request.environ[ENVIRON_KEY] = Remembered(asked_at, at, body)
    return body


MEMO = "uptime_healthy"


@dataclass(frozen=True)
class Remembered:
    """A healthy answer, served again while fresh (by the view, and by
    ``health_wsgi`` without Flask once it has seen it sent)."""

    asked_at: datetime
    at: float  # time.monotonic() when asked
    body: dict[str, Any]

    def fresh(self, asked_at: datetime, at: float) -> bool:
        """Still to be served (by the wall clock and the app's clock both)."""
        return (
            0 <= at - self.at < HEALTHY_FOR_SECONDS
            and 0 <= (asked_at - self.asked_at).total_seconds() < HEALTHY_FOR_SECONDS
        )
