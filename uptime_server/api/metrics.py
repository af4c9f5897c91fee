"""GET /metrics: Prometheus text format (decisions §7).

Per scrape, a custom collector reads the database: per monitor ``up``, last
response time, 24h uptime and TLS certificate expiry, the outbox backlog
and the dispatch lag (how overdue the most overdue unclaimed check is). The
engine's in-process counters (``uptime_server.engine.metrics``) follow.
With ``UPTIME_METRICS_TOKEN`` set, a scrape needs
``Authorization: Bearer <token>``; without it /metrics is open.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import peewee
from flask import Blueprint, Response, request
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder

from uptime_server.api.health import scheduler_lag_seconds
from uptime_server.context import now, settings, state
from uptime_server.engine import metrics as engine_metrics
from uptime_server.errors import ApiError
from uptime_server.models import Monitor, Outbox
from uptime_server.stats import uptime_by_monitor

bp = Blueprint("metrics", __name__)

LABELS = ["monitor_id", "name"]
UP_STATUSES = {"online": 1.0, "warning": 1.0, "offline": 0.0}


@bp.get("/metrics")
def scrape() -> Any:
    _authorize(settings().metrics_token)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(now(), _dispatch_lag()))
    registry.register(_Forward(engine_metrics.REGISTRY))
    # Text format 0.0.4 unless the scraper asks for a newer one.
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encode(registry), content_type=content_type)


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


def _dispatch_lag() -> float:
    # A running scheduler knows its lag best; otherwise read it off the due times.
    hook = state().services.get("scheduler_lag")
    return float(hook()) if hook is not None else scheduler_lag_seconds()


class _Forward:
    """The process-level registry, served through the per-scrape one."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        return self.registry.collect()


class DatabaseCollector:
    """Figures read from the database at scrape time."""

    def __init__(self, at: datetime, dispatch_lag: float) -> None:
        self.at = at
        self.dispatch_lag = dispatch_lag

    def collect(self) -> Iterator[Metric]:
        yield from self._monitors()
        backlog = GaugeMetricFamily(
            "uptime_outbox_backlog", "Emails and Slack posts waiting for delivery."
        )
        backlog.add_metric([], Outbox.select().where(Outbox.status == "pending").count())
        yield backlog
        lag = GaugeMetricFamily(
            "uptime_dispatch_lag_seconds",
            "How overdue the most overdue unclaimed check is (0 when none is late).",
        )
        lag.add_metric([], self.dispatch_lag)
        yield lag

    def _monitors(self) -> Iterator[Metric]:
        families = {
            "up": GaugeMetricFamily(
                "uptime_monitor_up",
                "1 if the last check run passed, 0 if it failed.",
                labels=LABELS,
            ),
            "paused": GaugeMetricFamily(
                "uptime_monitor_paused", "1 if the monitor is paused.", labels=LABELS
            ),
            "rt": GaugeMetricFamily(
                "uptime_monitor_response_time_seconds",
                "Response time of the last check run.",
                labels=LABELS,
            ),
            "uptime": GaugeMetricFamily(
                "uptime_monitor_uptime_24h_ratio",
                "Share of passed check runs over the last 24 hours (0..1).",
                labels=LABELS,
            ),
            "cert": GaugeMetricFamily(
                "uptime_monitor_cert_expiry_timestamp_seconds",
                "When the TLS certificate of the monitored URL expires (Unix time).",
                labels=LABELS,
            ),
        }
        for chunk in peewee.chunked(_monitor_rows(), 1000):
            uptime = uptime_by_monitor([row[0] for row in chunk], self.at, ("24h",))
            for mid, name, status, paused, rt, cert in chunk:
                labels = [str(mid), name]
                families["paused"].add_metric(labels, 1.0 if paused else 0.0)
                if status in UP_STATUSES:
                    families["up"].add_metric(labels, UP_STATUSES[status])
                if rt is not None:
                    families["rt"].add_metric(labels, rt / 1000)
                if uptime[mid]["24h"] is not None:
                    families["uptime"].add_metric(labels, uptime[mid]["24h"] / 100)
                if cert is not None:
                    families["cert"].add_metric(labels, cert.timestamp())
        yield from families.values()


def _monitor_rows() -> list[tuple]:
    return list(
        Monitor.select(
            Monitor.id,
            Monitor.name,
            Monitor.status,
            Monitor.paused,
            Monitor.response_time,
            Monitor.cert_expires_at,
        )
        .order_by(Monitor.id)
        .tuples()
    )
