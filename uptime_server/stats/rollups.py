"""Roll-ups: per-monitor aggregates of check runs at 5m, 1h and 1d.

Each row keeps the run count, failures, the sum/min/max of response times of
passed runs, a sparse log-scaled histogram of them and the p95 read from it
(so a series bucket made of one row needs no histogram decoded). Buckets grow by 2 %
per step, so the geometric midpoint of a bucket is within 1 % of any value
in it and p95 read from merged histograms stays within 2 % of the exact
figure (whole milliseconds: below 50 ms a bucket holds at most one integer,
so the rounded midpoint is exact). Histograms merge by adding counts, so any
window is answered by summing rows, never by scanning raw runs.

The writer folds every batch of runs into all three resolutions inside its
own transaction (``add_runs``), so roll-ups are current to the last run.
Rows are addressed by their primary key (monitor, resolution, bucket) only:
neither writing nor reading ever touches rows outside the buckets asked for,
so the cost does not grow with the length of the history.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from uptime_server.db import Prepared, is_sqlite, locked
from uptime_server.models import Rollup
from uptime_server.stats import rollup_sql
from uptime_server.stats.known_cells import KnownCells

FIVE_MIN, HOUR, DAY = 300, 3600, 86400
RESOLUTIONS = (FIVE_MIN, HOUR, DAY)
# How long each resolution is kept (seconds; None: for ever). The stats
# windows rely on these: a window reaching further back than the 5-minute
# rows are kept starts on an hour (see ``stats.window``).
KEEP: dict[int, int | None] = {FIVE_MIN: 30 * DAY, HOUR: 365 * DAY, DAY: None}
GROWTH = 1.02
_LOG_GROWTH = math.log(GROWTH)

Key = tuple[int, int, int]  # (monitor_id, resolution, bucket)


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
    """The q-quantile (0..1, nearest rank) from a histogram, in whole ms."""
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
    """A stored histogram: a flat JSON list ``[index, count, index, count, ...]``."""
    if not text or text in ("[]", "{}"):
        return {}
    flat = json.loads(text)
    return dict(zip(flat[::2], flat[1::2], strict=True))


def encode_hist(hist: Mapping[int, int]) -> str:
    # A flat list of ints decodes faster than {"index": count} (no key
    # conversion), and stats merge up to a few hundred of these
    # (bench/README.md#figures-moved-from-the-code-issue-30).
    if len(hist) == 1:  # most new cells: one run, or runs alike (no json.dumps)
        ((index, count),) = hist.items()
        return f"[{index},{count}]" if count else "[]"
    flat = [x for pair in sorted(hist.items()) if pair[1] for x in pair]
    return json.dumps(flat, separators=(",", ":"))


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
        if other.rt_min is not None:
            self.rt_min = other.rt_min if self.rt_min is None else min(self.rt_min, other.rt_min)
        if other.rt_max is not None:
            self.rt_max = other.rt_max if self.rt_max is None else max(self.rt_max, other.rt_max)
        merge_hist(self.hist, other.hist)
        return self

    def add_row(
        self,
        checks: int,
        failed: int,
        rt_count: int,
        rt_sum: int,
        hist: str | None,
        rt_min: int | None = None,
        rt_max: int | None = None,
    ) -> None:
        """Merge a stored row's columns (the histogram still encoded) into this cell."""
        self.checks += checks
        self.failed += failed
        self.rt_count += rt_count
        self.rt_sum += rt_sum
        if rt_min is not None:
            self.rt_min = rt_min if self.rt_min is None else min(self.rt_min, rt_min)
        if rt_max is not None:
            self.rt_max = rt_max if self.rt_max is None else max(self.rt_max, rt_max)
        if hist and hist not in ("[]", "{}"):
            into = self.hist
            flat = json.loads(hist)
            for k, v in zip(flat[::2], flat[1::2], strict=True):
                into[k] = into.get(k, 0) + v

    def as_values(self) -> dict[str, object]:
        """Column values of a roll-up row holding this aggregate."""
        return {
            "checks": self.checks,
            "failed": self.failed,
            "rt_count": self.rt_count,
            "rt_sum": self.rt_sum,
            "rt_min": self.rt_min,
            "rt_max": self.rt_max,
            "p95": percentile(self.hist, 0.95),
            "hist": encode_hist(self.hist),
        }


@dataclass(frozen=True)
class RunSample:
    """The part of a check run that roll-ups keep."""

    monitor_id: int
    epoch: int  # checked_at as epoch seconds
    passed: bool  # online or warning
    response_time: int | None


def aggregate(samples: Iterable[RunSample]) -> dict[Key, Aggregate]:
    """Group samples into (monitor_id, resolution, bucket) cells."""
    cells: dict[Key, Aggregate] = {}
    for s in samples:
        for res in RESOLUTIONS:
            key = (s.monitor_id, res, s.epoch // res * res)
            cells.setdefault(key, Aggregate()).add_run(s.passed, s.response_time)
    return cells


def add_runs(samples: Sequence[RunSample], *, versions_moved: Collection[int] = ()) -> list[Key]:
    """Fold check runs into their roll-up rows. Call inside the writer's transaction.

    Moves the ``rollup_version`` of each monitor written, except those in
    *versions_moved*: the recorder moved theirs already, in this
    transaction, with the update of their state. Returns the cells written:
    give them to ``committed`` once the transaction has committed.

    SQLite: under the write lock BEGIN IMMEDIATE holds, the existing rows are
    read, merged in Python and written back, and the missing ones inserted
    whole. PostgreSQL: the cells are inserted as new rows where none exists
    (insert-or-ignore, safe under races; most cells of a burst), the others
    are locked (FOR UPDATE), merged in Python and written back. Each phase is
    one ``db.bulk`` statement run for all its rows. Cells this process has
    committed before (``KNOWN``) exist: they skip the insert.
    """
    cells = aggregate(samples)
    if not cells:
        return []
    _bump_versions(sorted({monitor_id for monitor_id, _, _ in cells} - set(versions_moved)))
    # One lock order for every writer, in both phases: (resolution, monitor,
    # bucket), the order _load_for_update locks in, so two writers that
    # share rows on PostgreSQL queue instead of deadlocking.
    keys = sorted(cells, key=lambda k: (k[1], k[0], k[2]))
    if is_sqlite():
        # BEGIN IMMEDIATE holds the write lock: no other writer can add a row
        # between this read and the writes, so new cells go in whole.
        existing = _load_for_update(keys)
        rollup_sql.INSERT_ROW.run([_row(key, cells[key]) for key in keys if key not in existing])
        old = [key for key in keys if key in existing]
        rollup_sql.UPDATE_ROW.run(_merged_rows(old, cells, existing))
        return keys
    # A known cell's insert could only be ignored, and an ignored insert of a
    # committed row takes no lock: leaving it out leaves the locks as they were.
    known = KNOWN.among(keys)
    inserted = _insert_new([key for key in keys if key not in known], cells)
    rest = [key for key in keys if key not in inserted]
    if not rest:
        return keys
    existing = _load_for_update(rest)
    gone = [key for key in rest if key not in existing]
    if gone:  # known, but deleted since (retention, by hand): insert them after all
        KNOWN.forget()
        inserted = _insert_new(gone, cells)
        existing.update(_load_for_update([key for key in gone if key not in inserted]))
        rest = [key for key in rest if key not in inserted]
    # Every row of *rest* exists and is locked (FOR UPDATE) by now.
    rollup_sql.UPDATE_ROW.run(_merged_rows(rest, cells, existing))
    return keys


def _insert_new(keys: list[Key], cells: Mapping[Key, Aggregate]) -> set[Key]:
    """PostgreSQL: insert the cells of *keys* whose rows do not exist; the keys inserted."""
    if not keys:
        return set()
    # Multi-row, in the sorted order: rows are inserted (and locked) in it.
    fresh = [_row(key, cells[key]) for key in keys]
    inserted = rollup_sql.INSERT_NEW.run(fresh)
    return {(monitor, resolution, bucket) for monitor, resolution, bucket in inserted}  # type: ignore[misc]


# The cells this process has committed (PostgreSQL only: see known_cells).
KNOWN = KnownCells()


def committed(keys: list[Key]) -> None:
    """*keys*, from ``add_runs``, are in a committed transaction."""
    if keys and not is_sqlite():
        KNOWN.add(keys)


# Every write of a monitor's roll-ups goes through ``add_runs``, which moves
# its ``rollup_version`` in the same transaction: a reader that sees a version
# sees at least the roll-ups written with it (stats.uptime_cache). Retention
# deletes only rows no current window reads, so it leaves the version alone.


def _bump_versions(monitor_ids: list[int]) -> None:
    """One more ``rollup_version`` for each of *monitor_ids* (whose rows the
    recorder holds locked already: no new lock order)."""
    rollup_sql.BUMP_VERSION.run([(monitor_id,) for monitor_id in monitor_ids])


def _row(key: Key, cell: Aggregate) -> tuple[object, ...]:
    """``rollup_sql.UPDATED_COLUMNS`` of *cell*, then *key* (``as_values`` without its dict)."""
    hist = cell.hist
    return (
        cell.checks,
        cell.failed,
        cell.rt_count,
        cell.rt_sum,
        cell.rt_min,
        cell.rt_max,
        percentile(hist, 0.95),
        encode_hist(hist),
        *key,
    )


def _merged_rows(
    keys: list[Key], cells: Mapping[Key, Aggregate], existing: Mapping[Key, Aggregate]
) -> list[tuple[object, ...]]:
    return [_row(key, existing[key].merge(cells[key])) for key in keys]


_LOAD_COLUMNS = (
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


def _build_load(monitors: list[int], res: int, buckets: list[int]) -> Any:
    query = Rollup.select(*_LOAD_COLUMNS).where(
        Rollup.monitor.in_(monitors) & (Rollup.resolution == res) & Rollup.bucket.in_(buckets)
    )
    return locked(query, Rollup.monitor, Rollup.bucket).tuples()


# Its SQL text built once per database and list lengths, not on every batch.
_LOAD = Prepared(_build_load)


def _load_for_update(keys: list[Key]) -> dict[Key, Aggregate]:
    """The rows of *keys*, fetched by primary key (one query per resolution).

    Each query names the resolution and the buckets exactly, so it is a
    handful of index seeks, never a walk over a monitor's whole history.
    Rows come back as tuples: building model instances costs more than the
    query on a busy writer.
    """
    wanted = set(keys)
    found: dict[Key, Aggregate] = {}
    for res in RESOLUTIONS:
        monitors = sorted({m for m, r, _ in keys if r == res})
        buckets = sorted({b for _, r, b in keys if r == res})
        if not monitors:
            continue
        rows = _LOAD.rows(monitors, res, buckets)
        for monitor, r, bucket, checks, failed, count, total, low, high, hist in rows:
            key = (monitor, r, bucket)
            if key in wanted:
                found[key] = Aggregate(checks, failed, count, total, low, high, decode_hist(hist))
    return found


def cover(start: int, end: int, max_res: int = DAY) -> list[tuple[int, int, int]]:
    """Split [start, end) into ranges of whole buckets, coarsest first.

    Returns ``(resolution, first_bucket, stop)`` triples: the coarsest
    resolution (at most *max_res*) that fits whole buckets in the middle,
    and finer ones only for the edges. At most five ranges, and the number
    of rows they hold depends on the window, not on the history. *start*
    and *end* must be multiples of five minutes.
    """
    if start % FIVE_MIN or end % FIVE_MIN:
        raise ValueError("window edges must be multiples of 5 minutes")
    out: list[tuple[int, int, int]] = []
    _cover(start, end, [r for r in reversed(RESOLUTIONS) if r <= max_res], out)
    return out


def _cover(start: int, end: int, resolutions: list[int], out: list[tuple[int, int, int]]) -> None:
    if start >= end:
        return
    res, finer = resolutions[0], resolutions[1:]
    lo, hi = -(-start // res) * res, end // res * res
    if lo >= hi:
        _cover(start, end, finer, out)
        return
    out.append((res, lo, hi))
    _cover(start, lo, finer, out)
    _cover(hi, end, finer, out)
