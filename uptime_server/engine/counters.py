"""Process-level engine metrics, counted in memory and exposed on /metrics.

The scheduler (or whatever runs checks in this process) calls the small
functions below; ``uptime_server.api.metrics`` serves ``REGISTRY`` next to
the figures it reads from the database on each scrape. Counters live in the
process that counts them: with several daemons, scrape each one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.process_collector import ProcessCollector

REGISTRY = CollectorRegistry(auto_describe=True)

CHECKS_RUN = Counter(
    "uptime_checks",
    "Check runs finished by this process, by run status (online, warning, offline).",
    ["status"],
    registry=REGISTRY,
)
CHECK_ERRORS = Counter(
    "uptime_check_errors",
    "Check runs this process could not complete or record because of an internal error.",
    registry=REGISTRY,
)
DISPATCH_DELAY = Histogram(
    "uptime_dispatch_delay_seconds",
    "How long after its due time each check was started by this process.",
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
    registry=REGISTRY,
)
LAST_WRITE = Gauge(
    "uptime_engine_last_write_timestamp_seconds",
    "When this process's engine last wrote a batch of check results (Unix time; 0: never).",
    registry=REGISTRY,
)
LAST_CLAIM = Gauge(
    "uptime_engine_last_claim_timestamp_seconds",
    "When this process's engine last claimed due checks (Unix time; 0: never).",
    registry=REGISTRY,
)
DB_RECONNECTS = Counter(
    "uptime_engine_db_reconnects",
    "Database connections the engine's database worker opened again after the database "
    "dropped one (a restart, a failover, a terminated backend).",
    registry=REGISTRY,
)
ProcessCollector(registry=REGISTRY)


def record_check(status: str) -> None:
    """Count one finished check run (status: online, warning or offline)."""
    record_checks({status: 1})


def record_checks(counts: Mapping[str, int]) -> None:
    """Count finished check runs by status, many at once."""
    for status, count in counts.items():
        if count:
            CHECKS_RUN.labels(status=status).inc(count)


def record_check_error() -> None:
    """Count one check run lost to an internal error (probe or writer raised)."""
    CHECK_ERRORS.inc()


def record_dispatch_delay(seconds: float) -> None:
    """Observe how late (>= 0 s) a check started after its due time."""
    record_dispatch_delays((seconds,))


def record_dispatch_delays(seconds: Iterable[float]) -> None:
    """``record_dispatch_delay`` for each of many checks."""
    observe = DISPATCH_DELAY.observe
    for value in seconds:
        observe(value if value > 0.0 else 0.0)


def record_write(at: datetime) -> None:
    """The engine wrote a batch at *at*."""
    LAST_WRITE.set(at.timestamp())


def record_claim(at: datetime) -> None:
    """The engine claimed due checks at *at*."""
    LAST_CLAIM.set(at.timestamp())


def record_db_reconnects(count: int) -> None:
    """The database worker opened *count* connections again."""
    DB_RECONNECTS.inc(count)
