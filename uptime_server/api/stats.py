"""Statistics of one monitor: GET /api/v1/monitors/{id}/stats (docs/api.md#statistics)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from uptime_server.auth.teams import current_acting
from uptime_server.errors import ApiError, validation_error
from uptime_server.schemas.base import data, data_of
from uptime_server.schemas.checks import Statistics
from uptime_server.services import maintenance
from uptime_server.services import monitors as monitor_service
from uptime_server.stats.figures import (
    GRANULARITIES,
    MAX_BUCKETS,
    PERIODS,
    bucket_count,
    default_granularity,
    monitor_stats,
)
from uptime_server.wsgi.context import now
from uptime_server.wsgi.operations import choice, documenter
from uptime_server.wsgi.query_params import choice_param

bp = Blueprint("stats", __name__)
doc = documenter("monitors")


@bp.get("/monitors/<int:monitor_id>/stats")
@doc(
    "getMonitorStats",
    ok=data(Statistics),
    errors=(400, 404),
    params=(
        choice("period", tuple(PERIODS), "24h"),
        choice("granularity", tuple(GRANULARITIES), "1h"),
    ),
)
def show(monitor_id: int) -> Any:
    """Uptime and response-time statistics."""
    period, granularity = _params(request.args)
    monitor = monitor_service.get_owned(current_acting(), monitor_id)
    stats = monitor_stats(
        monitor.id,
        period,
        granularity,
        now(),
        lambda start, end: maintenance.maintenance_seconds(monitor, start, end),
    )
    return data_of(Statistics.model_validate(stats))


def _params(args: Any) -> tuple[str, str]:
    """period and granularity, or one VALIDATION_ERROR naming every bad one."""
    details: dict[str, list[str]] = {}
    period, granularity = "24h", None
    try:
        period = choice_param(args, "period", tuple(PERIODS), "24h") or "24h"
    except ApiError as exc:
        details.update(exc.details)
    try:
        granularity = choice_param(args, "granularity", tuple(GRANULARITIES))
    except ApiError as exc:
        details.update(exc.details)
    if details:
        raise validation_error(details)
    if granularity is None:
        # Omitted: 1h, unless that passes the limit (90d), then 1d.
        return period, default_granularity(period)
    count = bucket_count(period, granularity)
    if count > MAX_BUCKETS:
        raise validation_error(
            {
                "granularity": [
                    f"{period} at {granularity} gives {count} buckets; at most {MAX_BUCKETS}"
                    " are allowed, choose a coarser granularity"
                ]
            }
        )
    return period, granularity
