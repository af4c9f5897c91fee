"""0017: a maintenance window's RRULE whose DTSTART is over a year old starts at a recent date.

The API now refuses a DTSTART more than a year before now (docs/maintenance.md);
windows stored before keep their rule, with DTSTART moved forward by a whole
number of the rule's own periods (INTERVAL × FREQ: seconds, minutes, hours,
days, weeks, months or years), so the time of day, the weekday, the day of
the month and the INTERVAL grid, which dateutil takes from DTSTART, stay
what they were. The new DTSTART is the first such date within the last
year, and no later than 91 days ago, so that the occurrences of the last 90
days (the longest statistics period) are kept; a rule whose period is longer
gets the last such date before that.

Left as they are: a rule with COUNT (it counts from its DTSTART), a text
with more than one rule or with RDATE, EXDATE or EXRULE lines, a text the
parser cannot read, and a rule without DTSTART (anchored at the window's
creation). Every window is evaluated from near the time asked about anyway,
whatever its DTSTART; this only keeps stored rules within what the API
accepts.

Data only, no DDL: the same statements on SQLite and PostgreSQL. Frozen: it
reads the table with SQL and the rule with python-dateutil's parser, not the
models or the application's schedule code.
"""

from __future__ import annotations

import calendar
import logging
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import peewee
from dateutil import parser as date_parser

log = logging.getLogger(__name__)

MAX_AGE = timedelta(days=365)
KEEP = timedelta(days=91)

_DTSTART = re.compile(r"^(\s*DTSTART(?:;[^:\n]*)?:)([^\n]*?)\s*$", re.IGNORECASE | re.MULTILINE)
_UNITS = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600, "DAILY": 86400, "WEEKLY": 604800}


def up(db: peewee.Database) -> None:
    move_old_dtstarts(db, datetime.now(UTC))


def move_old_dtstarts(db: peewee.Database, now: datetime) -> int:
    """Rewrite the rules of *db*'s windows whose DTSTART is too old at *now*; how many."""
    p = db.param
    rows = db.execute_sql(
        'SELECT "id", "rrule", "timezone" FROM "maintenance_windows" '
        f'WHERE "rrule" IS NOT NULL AND UPPER("rrule") LIKE {p} ORDER BY "id"',
        ("%DTSTART%",),
    ).fetchall()
    moved = 0
    for window_id, text, timezone in rows:
        new = moved_rule(text, timezone, now)
        if new is not None:
            db.execute_sql(
                f'UPDATE "maintenance_windows" SET "rrule" = {p} WHERE "id" = {p}', (new, window_id)
            )
            log.info("maintenance window %s: DTSTART moved on (%r -> %r)", window_id, text, new)
            moved += 1
    return moved


def moved_rule(text: str, timezone: str | None, now: datetime) -> str | None:
    """*text* with its DTSTART moved to a recent date of the same phase; None: left as is."""
    found = list(_DTSTART.finditer(text))
    rest = [line.strip() for line in _DTSTART.sub("", text).splitlines() if line.strip()]
    if len(found) != 1 or len(rest) != 1:
        return None
    rule = rest[0].split(":", 1)[1] if rest[0].upper().startswith("RRULE:") else rest[0]
    if ":" in rule:
        return None  # RDATE, EXDATE, EXRULE: another kind of line
    parts = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    freq, interval = parts.get("FREQ"), parts.get("INTERVAL", "1")
    if "COUNT" in parts or not interval.isdigit() or int(interval) < 1:
        return None
    try:
        start = date_parser.parse(found[0].group(2), ignoretz=True)
        zone = ZoneInfo(timezone or "UTC")
    except (ValueError, OverflowError, ZoneInfoNotFoundError):
        return None
    local_now = now.astimezone(zone).replace(tzinfo=None)
    if start >= local_now - MAX_AGE:
        return None
    if freq in _UNITS:
        new = _by_seconds(start, _UNITS[freq] * int(interval), local_now)
    elif freq in ("MONTHLY", "YEARLY"):
        new = _by_months(start, int(interval) * (12 if freq == "YEARLY" else 1), local_now)
    else:
        return None
    if new is None or new <= start:
        return None
    value = f"{new:%Y%m%dT%H%M%S}" + ("Z" if found[0].group(2).upper().endswith("Z") else "")
    return text[: found[0].start(2)] + value + text[found[0].end(2) :]


def _by_seconds(start: datetime, period: int, local_now: datetime) -> datetime | None:
    step = timedelta(seconds=period)
    first = start + -((start - (local_now - MAX_AGE)) // step) * step  # first >= now - a year
    if first <= local_now - KEEP:
        return first
    last = start + ((local_now - KEEP - start) // step) * step  # last <= now - 91 days
    return last


def _by_months(start: datetime, months: int, local_now: datetime) -> datetime | None:
    def at(k: int) -> datetime | None:
        index = start.year * 12 + start.month - 1 + k * months
        year, month = divmod(index, 12)
        if not 1 <= year <= 9999 or start.day > calendar.monthrange(year, month + 1)[1]:
            return None  # the 31st of a month of 30 days, the 29th of February of a common year
        return start.replace(year=year, month=month + 1)

    lowest = local_now - MAX_AGE
    elapsed = (lowest.year - start.year) * 12 + lowest.month - start.month
    k = max(0, elapsed // months - 1)
    best = None
    # The candidates around a year ago, then back: a day that month lacks is skipped.
    for step in range(k, k + 4 + 48):
        when = at(step)
        if when is None or when < lowest:
            continue
        if when <= local_now - KEEP:
            return when
        break
    for step in range(k + 3, max(k - 48, 0), -1):
        when = at(step)
        if when is not None and when <= local_now - KEEP:
            best = when
            break
    return best
