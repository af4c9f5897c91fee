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


def cover(start: int, end: int) -> list[tuple[int, int, int]]:
    """The coarsest roll-up buckets covering [start, end): (resolution, lo, hi) ranges.

    *start* and *end* are multiples of 5 minutes. Every run is folded into its
    5m, 1h and 1d bucket alike, so a window summed from 5m edges, whole hours
    and whole days counts exactly what its 5m buckets hold, reading at most
    ~100 rows per monitor instead of 288 a day.
    """
    ranges: list[tuple[int, int, int]] = []
    cur = start
    while cur < end:
        res = next(r for r in (DAY, HOUR, FIVE_MIN) if cur % r == 0 and cur + r <= end)
        if ranges and ranges[-1][0] == res and ranges[-1][2] == cur:
            ranges[-1] = (res, ranges[-1][1], cur + res)
        else:
            ranges.append((res, cur, cur + res))
        cur += res
    return ranges


def uptime_by_monitor(
    monitor_ids: Iterable[int], now: datetime, windows: Iterable[str] = ("24h", "7d", "30d")
) -> dict[int, dict[str, float | None]]:
    """Uptime % per monitor and window, from roll-ups.

    A window runs from the 5-minute bucket holding ``now - window`` through the
    one holding ``now``; it is summed from the coarsest buckets that tile it,
    so the cost is bounded by buckets, not by raw check runs.
    """
    ids = list(monitor_ids)
    out: dict[int, dict[str, float | None]] = {i: {} for i in ids}
    if not ids:
        return out
    end = int(now.timestamp()) // FIVE_MIN * FIVE_MIN + FIVE_MIN
    for window in windows:
        start = int((now - WINDOWS[window]).timestamp()) // FIVE_MIN * FIVE_MIN
        found: dict[int, tuple[int, int]] = {}
        # One indexed range scan per tile. Not an OR of the tiles (SQLite
        # then scans every row of the monitors), nor a UNION ALL (PostgreSQL
        # then plans parallel workers whose start-up costs more than the scan).
        for res, lo, hi in cover(start, end):
            rows = (
                Rollup.select(
                    Rollup.monitor,
                    fn.SUM(Rollup.checks).alias("c"),
                    fn.SUM(Rollup.failed).alias("f"),
                )
                .where(
                    Rollup.monitor.in_(ids),
                    Rollup.resolution == res,
                    Rollup.bucket >= lo,
                    Rollup.bucket < hi,
                )
                .group_by(Rollup.monitor)
                .tuples()
            )
            for mid, c, f in rows:
                checks, failed = found.get(mid, (0, 0))
                found[mid] = (checks + int(c or 0), failed + int(f or 0))
        for mid in ids:
            checks, failed = found.get(mid, (0, 0))
            out[mid][window] = uptime_percent(checks, failed)
    return out
