"""Retention: old raw runs and fine roll-ups go, in small batches.

What is kept (docs/api.md#history, docs/statistics.md#retention):
- raw check runs for ``UPTIME_RAW_RETENTION_DAYS`` (default 30): a run goes
  when ``checked_at < now - N days``;
- 5-minute roll-ups for 30 days and hourly ones for a year: a row goes when
  its whole bucket is older than that (``bucket + width <= now - keep``), so
  the row holding the start of a 30-day stats window is always still there;
- daily roll-ups for ever.

Every DELETE is its own short write transaction touching at most
``batch_size`` rows of one monitor, found through the primary key or the
(monitor_id, checked_at) index, so the writer is never held for long and no
statement scans a table. Runs as a periodic housekeeping job (``register``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from uptime_server.config import Settings
from uptime_server.db import database, retry_locked, write_tx
from uptime_server.models import CheckRun, Monitor, Rollup
from uptime_server.stats.rollups import FIVE_MIN, HOUR, KEEP

log = logging.getLogger(__name__)

BATCH_SIZE = 2000
JOB_INTERVAL = 3600  # seconds: small, frequent deletes rather than a big nightly one


def run(now: datetime, settings: Settings, *, batch_size: int = BATCH_SIZE) -> dict[str, int]:
    """Delete what has outlived its retention; return the rows deleted per kind."""
    raw_cutoff = now - timedelta(days=settings.raw_retention_days)
    counts = {"check_runs": 0, "rollups_5m": 0, "rollups_1h": 0}
    with database.connection_context():
        ids = [row[0] for row in Monitor.select(Monitor.id).order_by(Monitor.id).tuples()]
        for monitor_id in ids:
            counts["check_runs"] += delete_runs(monitor_id, raw_cutoff, batch_size)
            for name, res in (("rollups_5m", FIVE_MIN), ("rollups_1h", HOUR)):
                cutoff = int(now.timestamp()) - (KEEP[res] or 0)
                counts[name] += delete_rollups(monitor_id, res, cutoff, batch_size)
    if any(counts.values()):
        log.info("retention: deleted %s", counts)
    return counts


def delete_runs(monitor_id: int, cutoff: datetime, batch_size: int = BATCH_SIZE) -> int:
    """Delete one monitor's runs checked before *cutoff*, *batch_size* rows at a time."""
    total = 0
    while True:
        oldest = (
            CheckRun.select(CheckRun.id)
            .where((CheckRun.monitor == monitor_id) & (CheckRun.checked_at < cutoff))
            .order_by(CheckRun.checked_at)
            .limit(batch_size)
        )
        deleted = _in_write_tx(lambda q=oldest: CheckRun.delete().where(CheckRun.id.in_(q)))
        total += deleted
        if deleted < batch_size:
            return total


def delete_rollups(monitor_id: int, resolution: int, cutoff: int, batch_size: int) -> int:
    """Delete one monitor's rows of *resolution* whose bucket ends by *cutoff* (epoch).

    Each batch ends at the *batch_size*-th oldest deletable bucket, read off
    the primary key, so a batch never holds more rows than that however
    sparse or dense the rows are.
    """
    total = 0
    deletable = (
        (Rollup.monitor == monitor_id)
        & (Rollup.resolution == resolution)
        & (Rollup.bucket <= cutoff - resolution)
    )
    while True:
        edge = (
            Rollup.select(Rollup.bucket)
            .where(deletable)
            .order_by(Rollup.bucket)
            .offset(batch_size - 1)
            .limit(1)
            .scalar()
        )
        batch = deletable if edge is None else deletable & (Rollup.bucket <= edge)
        deleted = _in_write_tx(lambda b=batch: Rollup.delete().where(b))
        total += deleted
        if edge is None:
            return total


def _in_write_tx(build: Callable[[], Any]) -> int:
    @retry_locked
    def go() -> int:
        with write_tx():
            return build().execute()

    return go()


def register(housekeeping: Any, settings: Settings, every_seconds: int = JOB_INTERVAL) -> Any:
    """Add the retention job to the daemon's housekeeping component.

    *housekeeping* is ``uptime_server.engine.housekeeping.Housekeeping``:
    ``register(name, every_seconds, fn)`` runs ``fn(now)`` on its schedule.
    """
    return housekeeping.register("retention", every_seconds, lambda now: run(now, settings))
