"""Uptime, response times, incidents and series, read from roll-ups.

The window of a period (edge rule)
----------------------------------
A period ``P`` asked at ``now`` covers the check runs from ``now - P``
rounded *down* to 5 minutes, up to now (the end of the 5-minute bucket
holding now, i.e. every run recorded so far). So a 24h window holds between
24h and 24h05m of history, never less. Periods longer than the 5-minute
roll-ups are kept (30 days, so only 90d) start on the hour instead, since
only hourly rows are left that far back. Incidents and downtime use the same
start. The consistency test checks raw runs against exactly this rule.

Cost
----
A window is split (``rollups.cover``) into daily rows for whole days, hourly
rows for whole hours and 5-minute rows for the edges, each range one primary
key range scan. A series at granularity ``g`` reads rows no coarser than
``g``, so every row falls into exactly one series bucket. The rows read
depend on the period and granularity only (at most ~2,050), never on how
many raw runs or how much history there is.

Series
------
One bucket per granularity step, aligned to it (UTC), from the one holding
the window start to the one holding now: ``P / g + 1`` buckets. The first
and last are partial (the first counts runs from the window start only), so
the series adds up exactly to the period's totals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import peewee
from peewee import fn

from uptime_server.engine.clock import isoformat
from uptime_server.models import Notification, Rollup
from uptime_server.rollups import (
    DAY,
    FIVE_MIN,
    HOUR,
    KEEP,
    Aggregate,
    cover,
    decode_hist,
    percentile,
)

PERIODS = {"24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY}
GRANULARITIES = {"5m": FIVE_MIN, "1h": HOUR, "1d": DAY}
UPTIME_WINDOWS = ("24h", "7d", "30d")
MAX_BUCKETS = 2000
_ID_CHUNK = 500


@dataclass(frozen=True)
class Window:
    """[start, end) in epoch seconds, plus the moment it was asked at."""

    start: int
    end: int
    now: datetime

    @property
    def start_at(self) -> datetime:
        return datetime.fromtimestamp(self.start, UTC)


def window(period_seconds: int, now: datetime) -> Window:
    """The window of a period at *now* (see the module's edge rule)."""
    t = math.floor(now.timestamp())
    align = FIVE_MIN if period_seconds <= (KEEP[FIVE_MIN] or 0) else HOUR
    start = (t - period_seconds) // align * align
    return Window(start, t // FIVE_MIN * FIVE_MIN + FIVE_MIN, now)


def bucket_count(period: str, granularity: str) -> int:
    """Series length: the buckets from the window start's to now's."""
    return PERIODS[period] // GRANULARITIES[granularity] + 1


def default_granularity(period: str) -> str:
    """1h, or 1d where 1h would pass the bucket limit (90d)."""
    return "1h" if bucket_count(period, "1h") <= MAX_BUCKETS else "1d"


def uptime_percent(checks: int, failed: int) -> float | None:
    if not checks:
        return None
    return round((checks - failed) * 100.0 / checks, 3)


def uptime_by_monitor(
    monitor_ids: Iterable[int], now: datetime, windows: Iterable[str] = UPTIME_WINDOWS
) -> dict[int, dict[str, float | None]]:
    """Uptime % per monitor and window.

    Per window, one grouped SUM per roll-up range (at most five) over a
    chunk of monitors: about 50 small rows per monitor for 24h, 80 for 30d.
    """
    ids = list(dict.fromkeys(monitor_ids))
    out: dict[int, dict[str, float | None]] = {i: {} for i in ids}
    for name in windows:
        w = window(PERIODS[name], now)
        counts = _sum_counts(ids, cover(w.start, w.end))
        for mid in ids:
            checks, failed = counts.get(mid, (0, 0))
            out[mid][name] = uptime_percent(checks, failed)
    return out


def _sum_counts(
    ids: list[int], ranges: Sequence[tuple[int, int, int]]
) -> dict[int, tuple[int, int]]:
    totals: dict[int, tuple[int, int]] = {}
    for chunk in peewee.chunked(ids, _ID_CHUNK):
        for res, lo, hi in ranges:
            rows = (
                Rollup.select(Rollup.monitor, fn.SUM(Rollup.checks), fn.SUM(Rollup.failed))
                .where(
                    Rollup.monitor.in_(chunk)
                    & (Rollup.resolution == res)
                    & (Rollup.bucket >= lo)
                    & (Rollup.bucket < hi)
                )
                .group_by(Rollup.monitor)
                .tuples()
            )
            for mid, checks, failed in rows:
                c, f = totals.get(mid, (0, 0))
                totals[mid] = (c + int(checks or 0), f + int(failed or 0))
    return totals


def slot_aggregates(monitor_id: int, w: Window, step: int) -> list[tuple[int, Aggregate]]:
    """One aggregate per series bucket of width *step*, empty ones included."""
    slots: dict[int, Aggregate] = {}
    for res, lo, hi in cover(w.start, w.end, max_res=step):
        rows = (
            Rollup.select(
                Rollup.bucket,
                Rollup.checks,
                Rollup.failed,
                Rollup.rt_count,
                Rollup.rt_sum,
                Rollup.rt_min,
                Rollup.rt_max,
                Rollup.hist,
            )
            .where(
                (Rollup.monitor == monitor_id)
                & (Rollup.resolution == res)
                & (Rollup.bucket >= lo)
                & (Rollup.bucket < hi)
            )
            .tuples()
        )
        for bucket, checks, failed, count, total, low, high, hist in rows:
            cell = Aggregate(checks, failed, count, total, low, high, decode_hist(hist))
            slot = bucket // step * step
            if slot in slots:
                slots[slot].merge(cell)
            else:
                slots[slot] = cell
    first = w.start // step * step
    return [(s, slots.get(s) or Aggregate()) for s in range(first, w.end, step)]


def incidents(monitor_id: int, w: Window) -> dict[str, int]:
    """Downtime notifications started in the window, and seconds offline in it.

    Each downtime notification counts from its start (or the window start)
    to its resolution (an open one: to now).
    """
    start, now = w.start_at, w.now
    rows = (
        Notification.select(Notification.started_at, Notification.resolved_at)
        .where(
            (Notification.monitor == monitor_id)
            & (Notification.type == "downtime")
            & (Notification.started_at <= now)
            & (Notification.resolved_at.is_null() | (Notification.resolved_at > start))
        )
        .tuples()
    )
    count, seconds = 0, 0.0
    for started_at, resolved_at in rows:
        if started_at >= start:
            count += 1
        end = min(resolved_at or now, now)
        seconds += max(0.0, (end - max(started_at, start)).total_seconds())
    return {"count": count, "total_downtime": int(seconds + 0.5)}


def monitor_stats(monitor_id: int, period: str, granularity: str, now: datetime) -> dict:
    """The Statistics object of api.md with period, granularity and series."""
    w = window(PERIODS[period], now)
    slots = slot_aggregates(monitor_id, w, GRANULARITIES[granularity])
    total = Aggregate()
    for _, cell in slots:
        total.merge(cell)
    return {
        "period": period,
        "granularity": granularity,
        "uptime": uptime_by_monitor([monitor_id], now)[monitor_id],
        "response_times": {
            "avg": _mean(total),
            "min": total.rt_min,
            "max": total.rt_max,
            "p95": percentile(total.hist, 0.95),
        },
        "incidents": incidents(monitor_id, w),
        "checks": {
            "total": total.checks,
            "successful": total.checks - total.failed,
            "failed": total.failed,
        },
        "series": [_point(start, cell) for start, cell in slots],
    }


def _mean(cell: Aggregate) -> int | None:
    # Half up, not Python's half-to-even: 120.5 ms reads as 121.
    return math.floor(cell.rt_sum / cell.rt_count + 0.5) if cell.rt_count else None


def _point(start: int, cell: Aggregate) -> dict:
    return {
        "start": isoformat(datetime.fromtimestamp(start, UTC)),
        "checks": cell.checks,
        "failed": cell.failed,
        "uptime": uptime_percent(cell.checks, cell.failed),
        "avg_response_time": _mean(cell),
        "p95_response_time": percentile(cell.hist, 0.95),
    }
