"""Roll-ups: per-monitor aggregates of check runs at 5m, 1h and 1d.

Each row keeps the run count, failures, the sum/min/max of response times of
passed runs and a sparse log-scaled histogram of them. Buckets grow by 2 %
per step, so the geometric midpoint of a bucket is within 1 % of any value
in it and p95 read from merged histograms stays within 2 % of the exact
figure. Histograms merge by adding counts, so any window can be answered by
summing rows, never by scanning raw runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from uptime_server.db import execute_many, is_sqlite
from uptime_server.models import Rollup

RESOLUTIONS = (300, 3600, 86400)
GROWTH = 1.02
_LOG_GROWTH = math.log(GROWTH)


def hist_index(ms: int) -> int:
    """Bucket of a response time in ms: 0 holds 0 ms, then log-scaled."""
    if ms <= 0:
        return 0
    return 1 + int(math.log(ms) / _LOG_GROWTH)


def hist_value(index: int) -> float:
    """Representative value of a bucket (geometric midpoint)."""
    if index <= 0:
        return 0.0
    low = GROWTH ** (index - 1)
    return low * math.sqrt(GROWTH)


def percentile(hist: Mapping[int, int], q: float) -> int | None:
    """The q-quantile (0..1) from a histogram, rounded to whole ms."""
    total = sum(hist.values())
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for index in sorted(hist):
        seen += hist[index]
        if seen >= rank:
            return round(hist_value(index))
    return round(hist_value(max(hist)))


def decode_hist(text: str | None) -> dict[int, int]:
    if not text:
        return {}
    return {int(k): int(v) for k, v in json.loads(text).items()}


def encode_hist(hist: Mapping[int, int]) -> str:
    return json.dumps({str(k): v for k, v in sorted(hist.items()) if v}, separators=(",", ":"))


def merge_hist(into: dict[int, int], other: Mapping[int, int]) -> dict[int, int]:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v
    return into


@dataclass
class Aggregate:
    """An in-memory roll-up cell: what one bucket accumulates."""

    checks: int = 0
    failed: int = 0
    rt_count: int = 0
    rt_sum: int = 0
    rt_min: int | None = None
    rt_max: int | None = None
    hist: dict[int, int] = field(default_factory=dict)

    def add_run(self, passed: bool, response_time: int | None) -> None:
        self.checks += 1
        if not passed:
            self.failed += 1
            return
        if response_time is None:
            return
        self.rt_count += 1
        self.rt_sum += response_time
        self.rt_min = response_time if self.rt_min is None else min(self.rt_min, response_time)
        self.rt_max = response_time if self.rt_max is None else max(self.rt_max, response_time)
        idx = hist_index(response_time)
        self.hist[idx] = self.hist.get(idx, 0) + 1

    def merge(self, other: Aggregate) -> Aggregate:
        self.checks += other.checks
        self.failed += other.failed
        self.rt_count += other.rt_count
        self.rt_sum += other.rt_sum
        for name, pick in (("rt_min", min), ("rt_max", max)):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs is not None:
                setattr(self, name, theirs if mine is None else pick(mine, theirs))
        merge_hist(self.hist, other.hist)
        return self

    @classmethod
    def from_row(cls, row: Rollup) -> Aggregate:
        return cls(
            row.checks,
            row.failed,
            row.rt_count,
            row.rt_sum,
            row.rt_min,
            row.rt_max,
            decode_hist(row.hist),
        )


@dataclass(frozen=True)
class RunSample:
    """The part of a check run that roll-ups keep."""

    monitor_id: int
    epoch: int  # checked_at as epoch seconds
    passed: bool
    response_time: int | None


def aggregate(samples: Iterable[RunSample]) -> dict[tuple[int, int, int], Aggregate]:
    """Group samples into (monitor_id, resolution, bucket) cells."""
    cells: dict[tuple[int, int, int], Aggregate] = {}
    for s in samples:
        for res in RESOLUTIONS:
            key = (s.monitor_id, res, s.epoch // res * res)
            cells.setdefault(key, Aggregate()).add_run(s.passed, s.response_time)
    return cells


_INSERT_EMPTY = (
    "INSERT INTO rollups (monitor_id, resolution, bucket, checks, failed, rt_count, rt_sum, hist) "
    "VALUES (?, ?, ?, 0, 0, 0, 0, '{}') ON CONFLICT DO NOTHING"
)
_UPDATE_ROLLUP = (
    "UPDATE rollups SET checks = ?, failed = ?, rt_count = ?, rt_sum = ?, rt_min = ?, "
    "rt_max = ?, hist = ? WHERE monitor_id = ? AND resolution = ? AND bucket = ?"
)


def add_runs(samples: Sequence[RunSample]) -> None:
    """Fold check runs into their roll-up rows. Call inside the writer's transaction.

    Rows are created empty if missing (insert-or-ignore, safe under races),
    then locked (FOR UPDATE on PostgreSQL; SQLite's write lock is already
    held by BEGIN IMMEDIATE), merged in Python and written back with one
    ``executemany``.
    """
    cells = aggregate(samples)
    if not cells:
        return
    keys = sorted(cells)
    execute_many(_INSERT_EMPTY, keys)
    existing = _load_for_update(keys)
    rows = []
    for key in keys:
        merged = existing[key].merge(cells[key])
        rows.append(
            (
                merged.checks,
                merged.failed,
                merged.rt_count,
                merged.rt_sum,
                merged.rt_min,
                merged.rt_max,
                encode_hist(merged.hist),
                *key,
            )
        )
    execute_many(_UPDATE_ROLLUP, rows)


_ROLLUP_COLUMNS = (
    Rollup.monitor,
    Rollup.resolution,
    Rollup.bucket,
    Rollup.checks,
    Rollup.failed,
    Rollup.rt_count,
    Rollup.rt_sum,
    Rollup.rt_min,
    Rollup.rt_max,
    Rollup.hist,
)


def _load_for_update(keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], Aggregate]:
    monitors = sorted({k[0] for k in keys})
    by_res: dict[int, set[int]] = {}
    for _, res, bucket in keys:
        by_res.setdefault(res, set()).add(bucket)
    cond = None
    for res, buckets in by_res.items():
        part = (Rollup.resolution == res) & Rollup.bucket.in_(sorted(buckets))
        cond = part if cond is None else (cond | part)
    query = Rollup.select(*_ROLLUP_COLUMNS).where(Rollup.monitor.in_(monitors) & cond)
    if not is_sqlite():
        query = query.order_by(Rollup.monitor, Rollup.resolution, Rollup.bucket).for_update()
    wanted = set(keys)
    found: dict[tuple[int, int, int], Aggregate] = {}
    for monitor, res, bucket, checks, failed, count, total, low, high, hist in query.tuples():
        key = (monitor, res, bucket)
        if key in wanted:
            found[key] = Aggregate(checks, failed, count, total, low, high, decode_hist(hist))
    return found
