"""The database figures of /metrics, read by a daemon loop, not by each scrape.

Reading them costs a scan of the monitors and their roll-ups (0.6 s at 10,000
monitors), far too much for an unauthenticated endpoint that Prometheus hits
every 15 s, once per replica. ``MetricsRefresher``, a loop part of the daemon's
API process, reads them every ``UPTIME_METRICS_REFRESH_INTERVAL`` into a
``MetricsCache``; a scrape serves the latest ``Snapshot`` and touches no table.

Per-monitor series (names and ids of every user's monitors) are read only
when ``UPTIME_METRICS_TOKEN`` is set: without it /metrics is public, and they
are not served at all. Each refresh also encodes them, in every exposition
format a scrape has asked for, so a scrape only concatenates bytes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import peewee
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric

from uptime_server.config import Settings
from uptime_server.db import database
from uptime_server.engine.dispatcher import scheduler_lag
from uptime_server.models import Monitor, Outbox
from uptime_server.stats.figures import uptime_by_monitor

log = logging.getLogger(__name__)

LABELS = ["monitor_id", "name"]
UP_STATUSES = {"online": 1.0, "warning": 1.0, "offline": 0.0}
_EOF = b"# EOF\n"

Encoder = Callable[[CollectorRegistry], bytes]


@dataclass
class Snapshot:
    """What one refresh read; immutable once published, but for its encodings."""

    taken_at: datetime
    outbox_backlog: int
    dispatch_lag: float
    monitor_families: list[Metric] = field(default_factory=list)
    _encoded: dict[Encoder, bytes] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def encoded_formats(self) -> frozenset[Encoder]:
        with self._lock:
            return frozenset(self._encoded)

    def encoded_monitor_series(self, encode: Encoder) -> bytes:
        """The per-monitor families in *encode*'s format, without a closing ``# EOF``."""
        with self._lock:
            body = self._encoded.get(encode)
            if body is None:
                registry = CollectorRegistry(auto_describe=False)
                registry.register(_Families(self.monitor_families))
                body = encode(registry)
                if body.endswith(_EOF):  # OpenMetrics: the scrape closes the whole body
                    body = body[: -len(_EOF)]
                self._encoded[encode] = body
            return body


class _Families:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def read_snapshot(now: datetime, *, per_monitor: bool) -> Snapshot:
    """Read the figures from the database (the caller holds a connection)."""
    backlog = Outbox.select().where(Outbox.status == "pending").count()
    return Snapshot(
        taken_at=now,
        outbox_backlog=backlog,
        dispatch_lag=scheduler_lag(now),
        monitor_families=monitor_families(now) if per_monitor else [],
    )


def monitor_families(now: datetime) -> list[Metric]:
    """Per monitor: up, paused, last response time, 24h uptime, TLS certificate expiry."""
    families = {
        "up": GaugeMetricFamily(
            "uptime_monitor_up", "1 if the last check run passed, 0 if it failed.", labels=LABELS
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
        uptime = uptime_by_monitor([row[0] for row in chunk], now, ("24h",))
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
    return list(families.values())


def _monitor_rows() -> list[tuple[Any, ...]]:
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


class MetricsCache:
    """The latest snapshot, shared by the refresher and the API's threads."""

    def __init__(self, *, per_monitor: bool) -> None:
        self.per_monitor = per_monitor
        self.snapshot: Snapshot | None = None  # replaced whole: readers need no lock
        self._formats: set[Encoder] = set()  # asked for by scrapes so far

    def refresh(self, now: datetime) -> Snapshot:
        snapshot = read_snapshot(now, per_monitor=self.per_monitor)
        if self.per_monitor:
            # Encoded here, off the request path, in the formats scrapers ask
            # for (only the very first scrape of a format encodes for itself).
            for encode in list(self._formats):
                snapshot.encoded_monitor_series(encode)
        self.snapshot = snapshot
        return snapshot

    def monitor_series(self, snapshot: Snapshot, encode: Encoder) -> bytes:
        """*snapshot*'s per-monitor series in *encode*'s format, encoded once."""
        self._formats.add(encode)
        return snapshot.encoded_monitor_series(encode)


def metrics_cache_for(settings: Settings) -> MetricsCache:
    return MetricsCache(per_monitor=bool(settings.metrics_token))


class MetricsRefresher:
    """Daemon loop part: refresh the cache every ``metrics_refresh_interval`` seconds."""

    name = "metrics-cache"

    def __init__(self, settings: Settings, cache: MetricsCache | None = None) -> None:
        self.interval = settings.metrics_refresh_interval
        self.cache = cache or metrics_cache_for(settings)
        self.services = {"metrics_cache": self.cache}
        self.next_at: datetime | None = None

    def loop(self, now: datetime) -> float:
        # The runner wakes more often than the interval: refresh only when due.
        if self.next_at is not None and now < self.next_at:
            return (self.next_at - now).total_seconds()
        with database.connection_context():
            self.cache.refresh(now)
        self.next_at = now + timedelta(seconds=self.interval)
        return float(self.interval)

    def shutdown(self, grace: float) -> None:
        """Nothing in flight outlives ``loop``."""
