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

Every evaluation walks the schedule under a budget of steps
(``recurrence``): from the start of the rule's period just before the time
asked about, never from a DTSTART years back, and only as far as the time
asked about. Whether a window is open at T needs only the last start before
T (the occurrence that reaches furthest past it), looked for in the hour,
then the day before T first. A schedule that needs more steps fails closed: its
occurrences count as not open, and the window's id is logged.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from uptime_server.maintenance.recurrence import (
    Failures,
    OverBudget,
    Steps,
    cron_fires_before,
    cron_minutes,
    cron_starts,
    explicit_dtstart,
    parse_rrule,
    rrule_starts,
)

log = logging.getLogger(__name__)

# Steps one evaluation of one window may take (recurrence.Steps): a question
# from the API or the statistics (spans over up to 90 days, the next start
# within 400 days), and the few seconds the open-window cache asks about.
STEPS = 30_000
QUICK_STEPS = 3_000

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
    id: int | None = None  # the window's, for the log

    @classmethod
    def of(cls, row: object) -> Schedule:
        return cls(**{name: getattr(row, name) for name in cls.__dataclass_fields__})

    def without_recurrence(self) -> Schedule:
        return replace(self, rrule=None, cron=None)


def _local(t: datetime, zone: ZoneInfo) -> datetime:
    return t.astimezone(zone).replace(tzinfo=None)


def _utc(naive_local: datetime, zone: ZoneInfo) -> datetime:
    return naive_local.replace(tzinfo=zone).astimezone(UTC)


def recurring_starts(s: Schedule, lo: datetime, hi: datetime, steps: Steps) -> Iterator[datetime]:
    """UTC starts of the recurring schedule's occurrences in [lo, hi), in order.

    ``OverBudget`` once the walk has taken more than *steps*.
    """
    zone = ZoneInfo(s.timezone or "UTC")
    lo_local, hi_local = _local_bounds(lo, hi, zone)
    if s.rrule:
        anchor = _local(s.created_at or datetime(2000, 1, 1, tzinfo=UTC), zone)
        parsed = parse_rrule(s.rrule, anchor.replace(microsecond=0))
        local_starts = rrule_starts(parsed, lo_local, hi_local, steps)
    elif s.cron:
        local_starts = cron_starts(s.cron, lo_local, hi_local, steps)
    else:
        return
    for local_start in local_starts:
        start = _utc(local_start, zone)
        if start >= hi:
            return
        if start >= lo:
            yield start


def _local_bounds(lo: datetime, hi: datetime, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """Wall-clock bounds that hold every start falling in [lo, hi) UTC.

    A start's wall-clock time is its UTC time plus the offset it is read
    with, which near a change may be the offset of either side (a time in
    the spring-forward gap is read with the one before): so the offsets a
    day either side of each bound are taken, and the walk is no longer than
    [lo, hi) unless a change is that near.
    """
    day = timedelta(days=1)

    def offsets(t: datetime) -> list[timedelta]:
        return [(t + d).astimezone(zone).utcoffset() or timedelta(0) for d in (-day, 0 * day, day)]

    lo_local = (lo + min(offsets(lo))).replace(tzinfo=None)
    hi_local = (hi + max(offsets(hi))).replace(tzinfo=None)
    return lo_local, hi_local


def _latest_start(s: Schedule, at: datetime, length: timedelta, steps: Steps) -> datetime | None:
    """The last start in [at - length, at): the one occurrence before *at* that can reach past it.

    A cron is walked backwards from *at* (croniter can). An RRULE is walked
    forwards over the hour, then the day before *at* first: a frequent rule
    has a start there, and a walk over the whole duration (up to 31 days)
    would cost its every start.
    """
    if s.cron:
        return _latest_cron_start(s.cron, ZoneInfo(s.timezone or "UTC"), at, length, steps)
    hour, day = timedelta(hours=1), timedelta(days=1)
    found = None
    for back in sorted({min(length, hour), min(length, day), length}):
        for start in recurring_starts(s, at - back, at, steps):
            found = start
        if found is not None:
            return found
    return None


def _latest_cron_start(
    cron: str, zone: ZoneInfo, at: datetime, length: timedelta, steps: Steps
) -> datetime | None:
    lo_local, hi_local = _local_bounds(at - length, at, zone)
    # Wall-clock time runs against UTC only as far as the offsets change
    # (none: the first fire found is the last start).
    slack = (hi_local - lo_local) - length
    best, first_fire = None, None
    for fire in cron_fires_before(cron, hi_local, lo_local, steps):
        if first_fire is not None and fire < first_fire - slack:
            break
        start = _utc(fire, zone)
        if at - length <= start < at:
            first_fire = first_fire or fire
            best = max(best or start, start)
    return best


def evaluate(
    s: Schedule, lo: datetime, hi: datetime, steps: Steps | None = None
) -> tuple[list[Span], bool]:
    """The open spans of the window that overlap [lo, hi), clipped to it, in order; and
    whether its schedule was evaluated within its budget (*steps*; default ``STEPS``).

    Fails closed: a recurring schedule that needs more steps opens nothing
    (the one-off span and an opening by hand still count), and the window's
    id is logged.
    """
    found: list[Span] = []
    if s.starts_at is not None and s.ends_at is not None:
        found.append((s.starts_at, s.ends_at))
    complete = True
    if (s.rrule or s.cron) and s.duration:
        length = timedelta(seconds=s.duration)
        budget = steps or Steps(STEPS)
        try:
            before = _latest_start(s, lo, length, budget)
            starts = [before] if before is not None else []
            starts += recurring_starts(s, lo, hi, budget)
        except (OverBudget, ValueError) as exc:
            complete = False
            _failed(s, exc)
        else:
            found += [(t, t + length) for t in starts]
    if s.ended_at is not None:
        # Ending by hand cuts short the occurrence running then.
        found = [(a, min(b, s.ended_at) if a <= s.ended_at < b else b) for a, b in found]
    if s.manual_start is not None:
        found.append((s.manual_start, s.manual_end or datetime.max.replace(tzinfo=UTC)))
    clipped = [(max(a, lo), min(b, hi)) for a, b in found]
    return _union([(a, b) for a, b in clipped if a < b]), complete


FAILURES = Failures(log)  # once per window every 10 minutes


def _failed(s: Schedule, exc: Exception) -> None:
    FAILURES.warn(
        s.id,
        "maintenance window %s: its schedule %r cannot be evaluated (%s); counted as not open",
        s.id,
        s.rrule or s.cron,
        exc,
    )


def spans(s: Schedule, lo: datetime, hi: datetime) -> list[Span]:
    """The open spans of the window that overlap [lo, hi), clipped to it, in order."""
    return evaluate(s, lo, hi)[0]


def _union(spans_: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for a, b in sorted(spans_):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def is_open(s: Schedule, at: datetime) -> bool:
    return bool(evaluate(s, at, at + timedelta(seconds=1), Steps(QUICK_STEPS))[0])


LOOKAHEAD = timedelta(days=400)  # of open_until and next_start
# Occurrences one open span may chain (each starting before the last ends)
# before it counts as open until further notice: a window that runs an hour
# every hour is not walked for 400 days to find that it never closes.
CHAIN = 200


def _spans_from(s: Schedule, at: datetime, steps: Steps) -> Iterator[Span]:
    """The window's spans (one per occurrence, not merged) that end after *at*, by start."""

    def cut(span: Span) -> Span:  # ending by hand cuts short the occurrence running then
        a, b = span
        return (a, s.ended_at) if s.ended_at is not None and a <= s.ended_at < b else span

    fixed: list[Span] = []
    if s.starts_at is not None and s.ends_at is not None:
        fixed.append(cut((s.starts_at, s.ends_at)))
    if s.manual_start is not None:
        fixed.append((s.manual_start, s.manual_end or datetime.max.replace(tzinfo=UTC)))
    recurring: Iterator[Span] = iter(())
    if (s.rrule or s.cron) and s.duration:
        length = timedelta(seconds=s.duration)
        before = _latest_start(s, at, length, steps)
        starts = recurring_starts(s, at, at + LOOKAHEAD, steps)
        first = [before] if before is not None else []
        recurring = (cut((t, t + length)) for t in itertools.chain(first, starts))
    for a, b in heapq.merge(sorted(fixed), recurring):
        if b > at and a < b:
            yield a, b


class _Chained(Exception):
    """An open span chains more than CHAIN occurrences."""


def _open_spans_from(s: Schedule, at: datetime, steps: Steps) -> Iterator[Span]:
    """The window's open spans (merged) that end after *at*, in order."""
    current: list[datetime] | None = None
    chained = 0
    for a, b in _spans_from(s, at, steps):
        if current is not None and a <= current[1]:
            current[1] = max(current[1], b)
            chained += 1
            if chained > CHAIN:
                raise _Chained
            continue
        if current is not None:
            yield current[0], current[1]
        current, chained = [a, b], 1
    if current is not None:
        yield current[0], current[1]


def open_until(s: Schedule, at: datetime) -> datetime | None:
    """When the span open at *at* closes (None: not open, or open until ended by hand,
    or for more than 400 days or ``CHAIN`` occurrences in a row)."""
    try:
        for a, b in _open_spans_from(s, at, Steps(STEPS)):
            return b if a <= at and b < at + LOOKAHEAD else None
    except _Chained:
        return None
    except (OverBudget, ValueError) as exc:
        _failed(s, exc)
    return None


def next_start(s: Schedule, after: datetime) -> datetime | None:
    """The start of the first span beginning after *after* (within 400 days)."""
    try:
        for a, _b in _open_spans_from(s, after, Steps(STEPS)):
            if a > after:
                return a if a < after + LOOKAHEAD else None
    except _Chained:
        return None
    except (OverBudget, ValueError) as exc:
        _failed(s, exc)
    return None


def union_seconds(all_spans: list[Span]) -> int:
    """Seconds covered by any of the spans (overlaps counted once)."""
    return int(sum((b - a).total_seconds() for a, b in _union(all_spans)))


# -- what a new schedule must be (the API refuses the rest: docs/maintenance.md) ----------

MIN_GAP = timedelta(hours=1)  # between two starts
LOOK_AHEAD = timedelta(days=3653)  # a rule must open within this (10 years)
MAX_DTSTART_AGE = timedelta(days=365)
# Starts looked at for MIN_GAP: the first GAP_SAMPLE, within GAP_HORIZON.
GAP_SAMPLE = 500
GAP_HORIZON = timedelta(days=400)


def rrule_error(text: str, timezone: str, now: datetime, *, new: bool = True) -> str | None:
    """Why *text* cannot be a window's RRULE (None: it can); *new* False: whether it parses."""
    zone = ZoneInfo(timezone)
    local_now = _local(now, zone).replace(microsecond=0)
    try:
        dtstart = explicit_dtstart(text)
        parsed = parse_rrule(text, local_now)
    except OverBudget:
        return "its COUNT runs too long to evaluate: give UNTIL instead" if new else None
    except (ValueError, OverflowError):
        return "must be an RFC 5545 RRULE, e.g. 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2'"
    if not new:
        return None
    if dtstart is not None and dtstart < local_now - MAX_DTSTART_AGE:
        return (
            "DTSTART must be at most 1 year before now: give a recent occurrence "
            "of the same phase (the same time of day, weekday...)"
        )
    try:
        starts = rrule_starts(parsed, local_now, local_now + LOOK_AHEAD, Steps(STEPS))
        return _starts_error(starts, local_now)
    except OverBudget:
        return (
            "needs too many steps to evaluate: use the coarsest FREQ that fits "
            "(e.g. FREQ=DAILY;BYHOUR=2 rather than FREQ=MINUTELY;BYHOUR=2)"
        )


def cron_error(expression: str, timezone: str, now: datetime) -> str | None:
    """Why a valid five-field *expression* cannot be a window's cron (None: it can)."""
    minutes = cron_minutes(expression)
    if minutes is None or len(minutes) > 1:
        return (
            "opens the window less than 1 hour apart: give one minute of the hour, e.g. '0 2 * * *'"
        )
    local_now = _local(now, ZoneInfo(timezone)).replace(microsecond=0)
    starts = cron_starts(expression, local_now, local_now + LOOK_AHEAD, Steps(STEPS))
    return _starts_error(starts, local_now)


def _starts_error(starts: Iterator[datetime], local_now: datetime) -> str | None:
    previous = None
    for count, start in enumerate(starts):
        if previous is not None and start - previous < MIN_GAP:
            return "opens the window less than 1 hour apart"
        if count >= GAP_SAMPLE or start > local_now + GAP_HORIZON:
            return None
        previous = start
    if previous is None:
        return "opens the window at no time in the next 10 years"
    return None
