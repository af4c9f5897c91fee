"""When a maintenance window is open: pure functions of its schedule and a time.

A window's schedule is one-off (``starts_at`` to ``ends_at``), recurring (an
RRULE parsed by python-dateutil, or a cron expression read by croniter; each
occurrence lasts ``duration`` seconds from a start given in local time of
``timezone``), or none. Recurring starts are computed as wall-clock times in
the zone and turned into UTC through zoneinfo, so "02:00 Europe/Berlin" stays
02:00 across a DST change (a start that does not exist that day, in the
spring-forward gap, is taken with the offset before the change).

On top of the schedule, a window opened by hand is open from ``manual_start``
to ``manual_end`` (null: until ended), and ``ended_at`` (ending it by hand)
cuts short the scheduled occurrence running at that moment.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from croniter import croniter
from dateutil.rrule import rrulestr

log = logging.getLogger(__name__)

# Occurrences looked at per question: a cron firing every minute over 90 days
# of statistics is cut off here rather than iterated for ever.
MAX_OCCURRENCES = 20_000

Span = tuple[datetime, datetime]


@dataclass(frozen=True)
class Schedule:
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    rrule: str | None = None
    cron: str | None = None
    duration: int | None = None
    timezone: str = "UTC"
    manual_start: datetime | None = None
    manual_end: datetime | None = None
    ended_at: datetime | None = None
    # The anchor of an RRULE without DTSTART (the window's creation).
    created_at: datetime | None = None

    @classmethod
    def of(cls, row: object) -> Schedule:
        return cls(**{name: getattr(row, name) for name in cls.__dataclass_fields__})


def _local(t: datetime, zone: ZoneInfo) -> datetime:
    return t.astimezone(zone).replace(tzinfo=None)


def _utc(naive_local: datetime, zone: ZoneInfo) -> datetime:
    return naive_local.replace(tzinfo=zone).astimezone(UTC)


def recurring_starts(s: Schedule, lo: datetime, hi: datetime) -> Iterator[datetime]:
    """UTC starts of the recurring schedule's occurrences in [lo, hi), in order."""
    zone = ZoneInfo(s.timezone or "UTC")
    # A day either side: local wall-clock times shift against UTC by the offset.
    lo_local = _local(lo - timedelta(days=1), zone)
    hi_local = _local(hi + timedelta(days=1), zone)
    try:
        for count, local_start in enumerate(_local_starts(s, zone, lo_local, hi_local)):
            if count >= MAX_OCCURRENCES:
                return
            start = _utc(local_start, zone)
            if start >= hi:
                return
            if start >= lo:
                yield start
    except Exception:  # a rule that runs out of dates (cron "0 0 30 2 *") opens nothing
        log.warning("maintenance schedule %r gives no more dates", s.rrule or s.cron)


def _local_starts(
    s: Schedule, zone: ZoneInfo, lo_local: datetime, hi_local: datetime
) -> Iterator[datetime]:
    if s.rrule:
        anchor = _local(s.created_at or datetime(2000, 1, 1, tzinfo=UTC), zone)
        rule = rrulestr(s.rrule, dtstart=anchor.replace(microsecond=0), ignoretz=True)
        yield from rule.xafter(lo_local, inc=True)
        return
    if s.cron:
        it = croniter(s.cron, lo_local - timedelta(seconds=1))
        while True:
            t = it.get_next(datetime)
            if t >= hi_local:
                return
            yield t


def spans(s: Schedule, lo: datetime, hi: datetime) -> list[Span]:
    """The open spans of the window that overlap [lo, hi), clipped to it, in order."""
    found: list[Span] = []
    if s.starts_at is not None and s.ends_at is not None:
        found.append((s.starts_at, s.ends_at))
    if (s.rrule or s.cron) and s.duration:
        length = timedelta(seconds=s.duration)
        found += [(t, t + length) for t in recurring_starts(s, lo - length, hi)]
    if s.ended_at is not None:
        # Ending by hand cuts short the occurrence running then.
        found = [(a, min(b, s.ended_at) if a <= s.ended_at < b else b) for a, b in found]
    if s.manual_start is not None:
        found.append((s.manual_start, s.manual_end or datetime.max.replace(tzinfo=UTC)))
    clipped = [(max(a, lo), min(b, hi)) for a, b in found]
    return _union([(a, b) for a, b in clipped if a < b])


def _union(spans_: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for a, b in sorted(spans_):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def is_open(s: Schedule, at: datetime) -> bool:
    return bool(spans(s, at, at + timedelta(seconds=1)))


# Looked ahead in growing steps: a frequent cron costs a day's occurrences.
HORIZONS = (timedelta(days=1), timedelta(days=31), timedelta(days=400))


def open_until(s: Schedule, at: datetime) -> datetime | None:
    """When the span open at *at* closes (None: not open, or open until ended by hand)."""
    for horizon in HORIZONS:
        found = spans(s, at, at + horizon)
        if not found or found[0][0] > at:
            return None
        if found[0][1] < at + horizon:
            return found[0][1]
    return None


def next_start(s: Schedule, after: datetime) -> datetime | None:
    """The start of the first span beginning after *after* (within 400 days)."""
    for horizon in HORIZONS:
        for a, _b in spans(s, after, after + horizon):
            if a > after:
                return a
    return None


def union_seconds(all_spans: list[Span]) -> int:
    """Seconds covered by any of the spans (overlaps counted once)."""
    return int(sum((b - a).total_seconds() for a, b in _union(all_spans)))
