"""GET /metrics: Prometheus text format (docs/api.md#metrics).

A scrape reads no table: the database figures (outbox backlog, dispatch lag
and, with ``UPTIME_METRICS_TOKEN`` set, the per-monitor series) come from the
snapshot a daemon loop refreshes (``uptime_server.services.metrics``); the
engine's in-process counters (``uptime_server.engine.counters``) follow.

Without ``UPTIME_METRICS_TOKEN`` /metrics is open and serves only the
process and engine series: monitor names and ids of every user stay private.
With it, a scrape needs ``Authorization: Bearer <token>`` and gets the
per-monitor series too.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, request
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from uptime_server.engine import counters
from uptime_server.errors import ApiError
from uptime_server.services.metrics import MetricsCache, Snapshot
from uptime_server.wsgi.access import public
from uptime_server.wsgi.context import settings, state
from uptime_server.wsgi.operations import documented

bp = Blueprint("metrics", __name__)


def metrics_cache() -> MetricsCache:
    return state().services["metrics_cache"]


@bp.get("/metrics")
@public
@documented(
    "metrics",
    tag="service",
    ok={
        200: {
            "description": "Prometheus text format: process and engine series; the "
            "per-monitor series only with UPTIME_METRICS_TOKEN set and sent as a bearer token",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
    errors=(401,),
    limited=False,
    # Open unless UPTIME_METRICS_TOKEN is set; then a bearer token.
    security=[{}, {"metricsToken": []}],
)
def scrape() -> Any:
    """Prometheus metrics."""
    token = settings().metrics_token
    _authorize(token)
    cache = metrics_cache()
    snapshot = cache.snapshot
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(snapshot, _live_dispatch_lag()))
    registry.register(_Forward(counters.REGISTRY))
    # Text format 0.0.4 unless the scraper asks for a newer one.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    body = encode(registry)
    if token and snapshot is not None:
        body = cache.monitor_series(snapshot, encode) + body
    return Response(body, content_type=content_type)


def _authorize(token: str | None) -> None:
    if not token:
        return
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        raise ApiError(
            "UNAUTHORIZED",
            "Send Authorization: Bearer <UPTIME_METRICS_TOKEN> to read /metrics",
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )


def _live_dispatch_lag() -> float | None:
    # A running scheduler knows its lag in memory; otherwise the snapshot's figure.
    hook = state().services.get("scheduler_lag")
    return float(hook()) if hook is not None else None


class _Forward:
    """The process-level registry, served through the per-scrape one."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        return self.registry.collect()


class SnapshotCollector:
    """The engine-wide figures of the latest snapshot (none before the first)."""

    def __init__(self, snapshot: Snapshot | None, dispatch_lag: float | None) -> None:
        self.snapshot = snapshot
        self.dispatch_lag = dispatch_lag

    def collect(self) -> Iterator[Metric]:
        lag = self.dispatch_lag
        if self.snapshot is not None:
            taken = GaugeMetricFamily(
                "uptime_metrics_snapshot_timestamp_seconds",
                "When the database figures of this page were read (Unix time).",
            )
            taken.add_metric([], self.snapshot.taken_at.timestamp())
            yield taken
            backlog = GaugeMetricFamily(
                "uptime_outbox_backlog", "Emails and Slack posts waiting for delivery."
            )
            backlog.add_metric([], self.snapshot.outbox_backlog)
            yield backlog
            lag = self.snapshot.dispatch_lag if lag is None else lag
        if lag is not None:
            family = GaugeMetricFamily(
                "uptime_dispatch_lag_seconds",
                "How overdue the most overdue unclaimed check is (0 when none is late).",
            )
            family.add_metric([], lag)
            yield family
