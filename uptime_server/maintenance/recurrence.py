"""Recurring times (an RFC 5545 RRULE, a cron expression) walked under a hard budget of steps.

Both libraries walk from where the rule starts, one step at a time, and stop
only when they find what was asked for:

- dateutil's ``rrule`` walks period by period (a second for FREQ=SECONDLY, a
  day for DAILY...) from its DTSTART. Asked for the occurrences after *lo*,
  it walks every period since DTSTART first, and a period that matches
  nothing yields nothing, so a rule that never matches
  (``FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30``) walks on to the year 9999.
- croniter finds one fire per call.

Here every walk is bounded three ways:

- **Anchor.** A rule without COUNT is walked from the start of its own
  period at or before *lo*: the period grid (INTERVAL × FREQ counted from
  DTSTART) is kept, and everything else dateutil takes from DTSTART (the
  time of day of a DAILY rule, the weekday of a WEEKLY one...) was fixed
  when the rule was parsed, so the occurrences from there on are the same.
  A rule with COUNT counts from its DTSTART and cannot be moved: it is
  walked once, to its end, and kept as a list of dates (``parse_rrule``).
- **Horizon.** A walk stops at the first period that begins after *hi*,
  matched or not.
- **Budget.** ``Steps`` counts the work: each period walked costs one step
  and its days (a sixteenth each: checking a day against the BY rules is
  cheap), the loop dateutil runs to find the next valid minute or second
  (MINUTELY and SECONDLY with BYHOUR or BYMINUTE), and, when the walk starts
  at a DTSTART inside its period, that period's candidate times; each
  occurrence costs one, and each cron fire ``CRON_STEP``. Past the limit the
  walk raises ``OverBudget``; what that means (a window that counts as not
  open, a deadline a day away) is the caller's, and ``Failures`` logs it
  once in a while rather than on every question.

Times here are naive wall-clock times of the rule's time zone; turning them
into UTC is the caller's.
"""

from __future__ import annotations

import functools
import logging
import re
import time
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from math import gcd
from typing import Any

from croniter import CroniterBadDateError, croniter
from dateutil import parser as date_parser
from dateutil import rrule as du


class OverBudget(Exception):
    """A walk needed more steps than its budget."""


@dataclass
class Steps:
    """A budget of steps, spent by one evaluation (possibly over several walks)."""

    limit: int
    spent: int = 0

    def spend(self, n: int) -> None:
        self.spent += n
        if self.spent > self.limit:
            raise OverBudget(f"more than {self.limit} steps")


class Failures:
    """Logs a schedule that failed closed once per key (a window, a monitor) per *every*
    seconds, not on every request or batch that asks about it."""

    def __init__(self, log: logging.Logger, every: float = 600.0) -> None:
        self.log, self.every = log, every
        self._last: dict[object, float] = {}

    def warn(self, key: object, message: str, *args: object) -> None:
        moment = time.monotonic()
        last = self._last.get(key)
        if last is not None and moment - last < self.every:
            return
        if len(self._last) > 10_000:
            self._last.clear()
        self._last[key] = moment
        self.log.warning(message, *args)


class _PastHorizon(Exception):
    """The walk reached a period that begins after its horizon."""


# -- dateutil's walk, counted ----------------------------------------------------------

# dateutil asks its ``_iterinfo`` for each period's days (``ydayset`` ... ``ddayset``),
# once per period; a subclass answering the same while counting sees every period
# walked, matched or not. ``rrule._iter`` looks the class up among its module's
# globals, so the counted rule runs dateutil's own ``_iter`` with that one name bound
# to the subclass (dateutil 2.x; tests/maintenance/test_recurrence.py holds the walk to
# dateutil's own answers).
_DAY_SHIFT = 4  # a period's days cost days >> 4 steps, plus one


class _CountedWalk(du._iterinfo):  # type: ignore[name-defined,misc]
    def _period(self, found: Any, first_day: date) -> Any:
        rule: _CountedRule = self.rrule
        if first_day > rule.horizon:
            raise _PastHorizon
        _dset, start, end = found
        cost = 1 + ((end - start) >> _DAY_SHIFT) * (1 + len(rule._bysetpos or ()))
        cost += rule.seek_cost
        if rule.first_period:
            # Candidates before DTSTART in its own period are walked, not yielded.
            rule.first_period = False
            cost += (end - start) * len(rule._timeset or ())
        rule.steps.spend(cost)
        return found

    def ydayset(self, year: int, month: int, day: int) -> Any:
        return self._period(super().ydayset(year, month, day), date(year, 1, 1))

    def mdayset(self, year: int, month: int, day: int) -> Any:
        return self._period(super().mdayset(year, month, day), date(year, month, 1))

    def wdayset(self, year: int, month: int, day: int) -> Any:
        return self._period(super().wdayset(year, month, day), date(year, month, day))

    def ddayset(self, year: int, month: int, day: int) -> Any:
        return self._period(super().ddayset(year, month, day), date(year, month, day))


_dateutil_iter = types.FunctionType(
    du.rrule._iter.__code__, {**vars(du), "_iterinfo": _CountedWalk}, "_iter"
)


class _CountedRule(du.rrule):  # type: ignore[misc]
    """A copy of a parsed rrule whose walk spends *steps* and ends at *horizon*."""

    steps: Steps
    horizon: date
    not_before: datetime
    seek_cost: int
    first_period: bool

    @classmethod
    def of(cls, rule: du.rrule, steps: Steps, horizon: date, start: datetime) -> _CountedRule:
        """*rule* walked from *start* (a period start, or its DTSTART) up to *horizon*."""
        counted = cls.__new__(cls)
        counted.__dict__.update(rule.__dict__)
        counted._dtstart = start
        counted._len = None
        counted.steps = steps
        counted.horizon = horizon
        counted.not_before = rule._dtstart
        counted.seek_cost = _seek_cost(rule)
        # Walked from a DTSTART inside its period: the candidates before it are
        # walked but not yielded, at most the period's days times its times of day.
        counted.first_period = _period_start(rule, start) != start
        return counted

    def _iter(self) -> Iterator[datetime]:
        try:
            for found in _dateutil_iter(self):
                self.steps.spend(1)
                if found >= self.not_before:
                    yield found
        except _PastHorizon:
            return


def _seek_cost(rule: du.rrule) -> int:
    """The most turns of dateutil's search for the next valid minute or second, per period."""
    freq, interval = rule._freq, rule._interval
    if freq == du.MINUTELY and rule._byhour:
        return 1440 // gcd(interval, 1440)
    if freq == du.SECONDLY and (rule._byhour or rule._byminute):
        return 86400 // gcd(interval, 86400)
    return 0


# -- the anchor ------------------------------------------------------------------------


def _period_start(rule: du.rrule, near: datetime) -> datetime:
    """The start of the rule's own period at or before *near* (at least DTSTART's period)."""
    start, freq, interval = rule._dtstart, rule._freq, rule._interval
    if freq == du.YEARLY:
        k = max(0, (near.year - start.year) // interval)
        return datetime(start.year + k * interval, 1, 1)
    if freq == du.MONTHLY:
        k = max(0, ((near.year - start.year) * 12 + near.month - start.month) // interval)
        index = start.year * 12 + start.month - 1 + k * interval
        return datetime(index // 12, index % 12 + 1, 1)
    if freq == du.WEEKLY:
        first = start.date() - timedelta(days=(start.weekday() - rule._wkst) % 7)
        last = near.date() - timedelta(days=(near.weekday() - rule._wkst) % 7)
        k = max(0, (last - first).days // 7 // interval)
        return datetime.combine(first + timedelta(weeks=k * interval), datetime.min.time())
    unit = {du.DAILY: 86400, du.HOURLY: 3600, du.MINUTELY: 60, du.SECONDLY: 1}[freq]
    floor = {
        86400: start.replace(hour=0, minute=0, second=0),
        3600: start.replace(minute=0, second=0),
        60: start.replace(second=0),
        1: start,
    }[unit]
    k = max(0, int((near - floor).total_seconds()) // unit // interval)
    return floor + timedelta(seconds=k * interval * unit)


def _walk_from(rule: du.rrule, lo: datetime, hi: datetime, steps: Steps) -> _CountedRule:
    """*rule* walked from the start of its period at or before *lo* up to *hi*.

    Occurrences before DTSTART that the moved start lets through are dropped
    (each a step): the walk then counts exactly what it skips. BYSETPOS picks
    among a period's dates, and DTSTART's own period is cut short at DTSTART
    (a WEEKLY one from its day): such a rule keeps its DTSTART unless it moves
    on to a later, whole period, and the candidates of its first period are
    counted whole.
    """
    start = rule._dtstart
    if rule._count is None:
        start = _period_start(rule, lo)
        if rule._bysetpos and start <= rule._dtstart:
            start = rule._dtstart
    return _CountedRule.of(rule, steps, hi.date(), start)


# -- parsing, with COUNT rules walked once ---------------------------------------------


@dataclass(frozen=True)
class ParsedRule:
    """An RRULE text as walkable parts: rules without COUNT, and fixed dates."""

    rules: tuple[du.rrule, ...]
    exrules: tuple[du.rrule, ...]
    rdates: tuple[datetime, ...]
    exdates: tuple[datetime, ...]


_TZID = re.compile(r"^(\s*(?:DTSTART|RDATE|EXDATE))(?:;[^:\n]*)?:", re.IGNORECASE | re.MULTILINE)

# A COUNT rule is walked once, from its DTSTART to its last date, under this budget.
COUNT_STEPS = 20_000


@functools.lru_cache(maxsize=1024)
def parse_rrule(text: str, anchor: datetime) -> ParsedRule:
    """*text* parsed (DTSTART, if it has none, is *anchor*: naive local time).

    ``ValueError`` for a text dateutil cannot read; ``OverBudget`` for a COUNT
    that runs longer than ``COUNT_STEPS``.
    """
    try:
        # Times are wall-clock times of the window's zone: a TZID is dropped
        # (dateutil would keep it even with ignoretz).
        local = _TZID.sub(r"\1:", text)
        found = du.rrulestr(local, dtstart=anchor, ignoretz=True, forceset=True)
    except Exception as exc:  # the parser's errors are of many kinds
        raise ValueError(str(exc)) from exc
    rules = tuple(r for r in found._rrule if r._count is None)
    exrules = tuple(r for r in found._exrule if r._count is None)
    rdates = [*found._rdate, *_all_dates(r for r in found._rrule if r._count is not None)]
    exdates = [*found._exdate, *_all_dates(r for r in found._exrule if r._count is not None)]
    return ParsedRule(rules, exrules, tuple(sorted(rdates)), tuple(exdates))


def _all_dates(rules: Iterable[du.rrule]) -> list[datetime]:
    """Every date of each of these COUNT rules."""
    return [
        when
        for rule in rules
        for when in _CountedRule.of(rule, Steps(COUNT_STEPS), date.max, rule._dtstart)
    ]


def rrule_starts(
    parsed: ParsedRule, lo: datetime, hi: datetime, steps: Steps
) -> Iterator[datetime]:
    """The occurrences in [lo, hi), in order, each once."""
    walk = du.rruleset()
    for rule in parsed.rules:
        walk.rrule(_walk_from(rule, lo, hi, steps))
    for rule in parsed.exrules:
        walk.exrule(_walk_from(rule, lo, hi, steps))
    for when in parsed.rdates:
        if lo <= when < hi:
            walk.rdate(when)
    for when in parsed.exdates:
        walk.exdate(when)
    for when in walk.xafter(lo, inc=True):
        if when >= hi:
            return
        yield when


_DTSTART = re.compile(r"^\s*DTSTART[^:\n]*:([^\n]+)$", re.IGNORECASE | re.MULTILINE)


def explicit_dtstart(text: str) -> datetime | None:
    """The DTSTART written in *text* (naive: wall-clock time), or None if it has none."""
    found = _DTSTART.search(text)
    if found is None:
        return None
    return date_parser.parse(found.group(1).strip(), ignoretz=True)


# -- cron ------------------------------------------------------------------------------


# Steps a croniter call counts for: one call costs several of dateutil's steps.
CRON_STEP = 8


def cron_starts(expression: str, lo: datetime, hi: datetime, steps: Steps) -> Iterator[datetime]:
    """The fires of a five-field cron expression in [lo, hi) (naive times), in order."""
    it = croniter(expression, lo - timedelta(seconds=1))
    while True:
        steps.spend(CRON_STEP)
        try:
            fire = it.get_next(datetime)
        except CroniterBadDateError:  # no fire within croniter's search: none left
            return
        if fire >= hi:
            return
        yield fire


def cron_fires_before(
    expression: str, hi: datetime, lo: datetime, steps: Steps
) -> Iterator[datetime]:
    """The fires in [lo, hi) (naive times), latest first."""
    it = croniter(expression, hi)
    while True:
        steps.spend(CRON_STEP)
        try:
            fire = it.get_prev(datetime)
        except CroniterBadDateError:
            return
        if fire < lo:
            return
        if fire < hi:
            yield fire


def cron_minutes(expression: str) -> list[int] | None:
    """The minutes of the hour a cron expression fires at (None: every minute)."""
    minutes = croniter(expression).expanded[0]
    return None if minutes == ["*"] else [int(m) for m in minutes]
