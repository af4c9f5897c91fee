"""Liveness and readiness: GET /healthz (no auth)."""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint

from uptime_server.context import now, state
from uptime_server.engine.dispatcher import scheduler_lag

log = logging.getLogger(__name__)
bp = Blueprint("health", __name__)


def scheduler_lag_seconds() -> float:
    """Without a scheduler in this process: the lag the database shows, all locations."""
    return scheduler_lag(now())


@bp.get("/healthz")
def healthz() -> Any:
    # The scheduler of this process knows its own lag (claimed, not started);
    # without one, the database's oldest unclaimed due check tells. Either
    # reads the database, so it doubles as the database check.
    lag_of = state().services.get("scheduler_lag") or scheduler_lag_seconds
    try:
        lag = lag_of()
    except Exception:  # noqa: BLE001 - health must answer whatever broke
        log.exception("health check: database unavailable")
        return {"status": "error", "database": "unavailable", "scheduler_lag_seconds": None}, 503
    return {"status": "ok", "database": "ok", "scheduler_lag_seconds": lag}
