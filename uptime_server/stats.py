"""Uptime and response-time figures, read from roll-ups (never raw scans)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from peewee import fn

from uptime_server.models import Rollup

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
FIVE_MIN, HOUR, DAY = 300, 3600, 86400


def uptime_percent(checks: int, failed: int) -> float | None:
    if not checks:
        return None
    return round((checks - failed) * 100.0 / checks, 3)


def uptime_by_monitor(
    monitor_ids: Iterable[int], now: datetime, windows: Iterable[str] = ("24h", "7d", "30d")
) -> dict[int, dict[str, float | None]]:
    """Uptime % per monitor and window, from the 5-minute roll-ups.

    One grouped query per window over (monitor, resolution, bucket) keys, so
    the cost is bounded by buckets in the window, not by raw check runs.
    """
    ids = list(monitor_ids)
    out: dict[int, dict[str, float | None]] = {i: {} for i in ids}
    if not ids:
        return out
    for window in windows:
        start = int((now - WINDOWS[window]).timestamp()) // FIVE_MIN * FIVE_MIN
        rows = (
            Rollup.select(
                Rollup.monitor, fn.SUM(Rollup.checks).alias("c"), fn.SUM(Rollup.failed).alias("f")
            )
            .where(
                Rollup.monitor.in_(ids),
                Rollup.resolution == FIVE_MIN,
                Rollup.bucket >= start,
            )
            .group_by(Rollup.monitor)
            .tuples()
        )
        found = {mid: (c or 0, f or 0) for mid, c, f in rows}
        for mid in ids:
            checks, failed = found.get(mid, (0, 0))
            out[mid][window] = uptime_percent(int(checks), int(failed))
    return out
