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
key range scan (the ranges of one question go as one UNION ALL). The totals
and p95 of a period come from those coarsest rows (at most ~160); a series
at granularity ``g`` reads rows no coarser than ``g``, so every row falls
into exactly one series bucket, and a bucket that is one whole row takes
the row's stored p95 without decoding its histogram. The rows read depend
on the period and granularity only, never on how many raw runs or how much
history there is. A stats request is three roll-up queries and one on
notifications.

Series
------
One bucket per granularity step, aligned to it (UTC), from the one holding
the window start to the one holding now: ``P / g + 1`` buckets. The first
and last are partial (the first counts runs from the window start only), so
the series adds up exactly to the period's totals.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import peewee
from peewee import SQL

from uptime_server.clock import isoformat
from uptime_server.models import Notification, Rollup
from uptime_server.stats import figures_sql
from uptime_server.stats.rollups import (
    DAY,
    FIVE_MIN,
    HOUR,
    KEEP,
    Aggregate,
    cover,
    percentile,
)

PERIODS = {"24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY, "90d": 90 * DAY}
GRANULARITIES = {"5m": FIVE_MIN, "1h": HOUR, "1d": DAY}
UPTIME_WINDOWS = ("24h", "7d", "30d")
MAX_BUCKETS = 2000
_ID_CHUNK = 200


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

    One query per chunk of monitors: a UNION ALL of grouped SUMs, one arm
    per window and roll-up range (at most five per window), each a primary
    key range scan. About 50 small rows per monitor for 24h, 80 for 30d.
    """
    ids = list(dict.fromkeys(monitor_ids))
    names = list(windows)
    arms = []
    for i, name in enumerate(names):
        w = window(PERIODS[name], now)
        arms += [(i, res, lo, hi) for res, lo, hi in cover(w.start, w.end)]
    sums: dict[tuple[int, int], list[int]] = {}
    # (peewee's chunked pads every chunk to full length first: dear for a few ids)
    for chunk in [ids] if 0 < len(ids) <= _ID_CHUNK else peewee.chunked(ids, _ID_CHUNK):
        for i, mid, checks, failed in figures_sql.uptime_sums(arms, chunk):
            acc = sums.setdefault((mid, i), [0, 0])
            acc[0] += int(checks or 0)
            acc[1] += int(failed or 0)
    return {
        mid: {name: uptime_percent(*sums.get((mid, i), (0, 0))) for i, name in enumerate(names)}
        for mid in ids
    }


@dataclass
class Point:
    """One series bucket: counts, response-time sum and p95."""

    checks: int = 0
    failed: int = 0
    rt_count: int = 0
    rt_sum: int = 0
    p95: int | None = None


def series_points(monitor_id: int, w: Window, step: int) -> list[tuple[int, Point]]:
    """One point per series bucket of width *step*, empty ones included.

    Buckets filled by one row of their own width take that row's stored
    p95; only the partial buckets at the edges, made of finer rows, merge
    histograms.
    """
    ranges = cover(w.start, w.end, max_res=step)
    query = _union_all(
        Rollup.select(
            Rollup.bucket,
            Rollup.checks,
            Rollup.failed,
            Rollup.rt_count,
            Rollup.rt_sum,
            Rollup.p95,
            Rollup.hist if res < step else SQL("NULL"),
        ).where((Rollup.monitor == monitor_id) & _in_range(res, lo, hi))
        for res, lo, hi in ranges
    )
    points: dict[int, Point] = {}
    merged: dict[int, Aggregate] = {}
    for bucket, checks, failed, count, total, p95, hist in query.tuples():
        slot = bucket // step * step
        if hist is None:
            points[slot] = Point(checks, failed, count, total, p95)
        else:
            merged.setdefault(slot, Aggregate()).add_row(checks, failed, count, total, hist)
    for slot, cell in merged.items():
        points[slot] = Point(
            cell.checks, cell.failed, cell.rt_count, cell.rt_sum, percentile(cell.hist, 0.95)
        )
    first = w.start // step * step
    return [(s, points.get(s) or Point()) for s in range(first, w.end, step)]


def window_total(monitor_id: int, w: Window) -> Aggregate:
    """The whole window in one aggregate, from the coarsest rows that fit."""
    query = _union_all(
        Rollup.select(
            Rollup.checks,
            Rollup.failed,
            Rollup.rt_count,
            Rollup.rt_sum,
            Rollup.hist,
            Rollup.rt_min,
            Rollup.rt_max,
        ).where((Rollup.monitor == monitor_id) & _in_range(res, lo, hi))
        for res, lo, hi in cover(w.start, w.end)
    )
    total = Aggregate()
    for checks, failed, count, rt_sum, hist, low, high in query.tuples():
        total.add_row(checks, failed, count, rt_sum, hist, low, high)
    return total


def _in_range(res: int, lo: int, hi: int) -> Any:
    return (Rollup.resolution == res) & (Rollup.bucket >= lo) & (Rollup.bucket < hi)


def _union_all(queries: Iterable[Any]) -> Any:
    # Each arm is planned on its own as a primary-key range scan; one OR'ed
    # WHERE would let the planner walk the monitor's whole history instead.
    return functools.reduce(operator.add, queries)


def incidents(monitor_id: int, w: Window) -> dict[str, int]:
    """Downtime notifications started in the window, and seconds offline in it.

    Each downtime notification counts from its start (or the window start)
    to its resolution (an open one: to now). ``blocked_downtime``: the part
    of it in suppressed notifications, a blocked monitor's (their alert never
    sent; docs/alerts.md#dependencies), included in ``total_downtime``.
    """
    start, now = w.start_at, w.now
    rows = (
        Notification.select(
            Notification.started_at, Notification.resolved_at, Notification.suppressed_by
        )
        .where(
            (Notification.monitor == monitor_id)
            & (Notification.type == "downtime")
            & (Notification.started_at <= now)
            & (Notification.resolved_at.is_null() | (Notification.resolved_at > start))
        )
        .tuples()
    )
    count, seconds, blocked = 0, 0.0, 0.0
    for started_at, resolved_at, suppressed_by in rows:
        if started_at >= start:
            count += 1
        end = min(resolved_at or now, now)
        part = max(0.0, (end - max(started_at, start)).total_seconds())
        seconds += part
        if suppressed_by is not None:
            blocked += part
    return {
        "count": count,
        "total_downtime": int(seconds + 0.5),
        "blocked_downtime": int(blocked + 0.5),
    }


def monitor_stats(
    monitor_id: int,
    period: str,
    granularity: str,
    now: datetime,
    maintenance: Callable[[datetime, datetime], int] = lambda _start, _end: 0,
) -> dict:
    """The statistics object (docs/api.md#statistics-object) with period, granularity and series.

    *maintenance*: the monitor's seconds in maintenance windows between two
    times. Runs checked in one never reach the roll-ups (the recorder leaves
    them out), so uptime and check counts exclude them already.
    """
    w = window(PERIODS[period], now)
    total = window_total(monitor_id, w)
    return {
        "period": period,
        "granularity": granularity,
        "uptime": uptime_by_monitor([monitor_id], now)[monitor_id],
        "response_times": {
            "avg": _mean(total.rt_sum, total.rt_count),
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
        "maintenance_seconds": maintenance(w.start_at, min(now, _end_at(w))),
        "series": [
            _point(start, point)
            for start, point in series_points(monitor_id, w, GRANULARITIES[granularity])
        ],
    }


def _end_at(w: Window) -> datetime:
    return datetime.fromtimestamp(w.end, UTC)


def _mean(rt_sum: int, rt_count: int) -> int | None:
    # Half up, not Python's half-to-even: 120.5 ms reads as 121.
    return math.floor(rt_sum / rt_count + 0.5) if rt_count else None


def _point(start: int, point: Point) -> dict:
    return {
        "start": isoformat(datetime.fromtimestamp(start, UTC)),
        "checks": point.checks,
        "failed": point.failed,
        "uptime": uptime_percent(point.checks, point.failed),
        "avg_response_time": _mean(point.rt_sum, point.rt_count),
        "p95_response_time": point.p95,
    }
