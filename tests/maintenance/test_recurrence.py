"""Recurrences walked under a budget: dateutil's own dates, from near the time asked about,
stopping at the horizon, and every step counted (also the periods that match nothing)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest
from dateutil.rrule import rrulestr

from uptime_server.maintenance.recurrence import (
    COUNT_STEPS,
    CRON_STEP,
    OverBudget,
    Steps,
    cron_fires_before,
    cron_minutes,
    cron_starts,
    explicit_dtstart,
    parse_rrule,
    rrule_starts,
)

RULES = [
    "FREQ=DAILY;BYHOUR=2;BYMINUTE=0;BYSECOND=0",
    "FREQ=DAILY;INTERVAL=3;BYHOUR=2,14",
    "FREQ=WEEKLY;INTERVAL=2",
    "FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=MO,FR",
    "FREQ=WEEKLY;BYDAY=MO,FR;BYSETPOS=-1",
    "FREQ=MONTHLY;BYDAY=-1FR",
    "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=31",
    "FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=2,-1",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    "FREQ=YEARLY;INTERVAL=3",
    "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
    "FREQ=YEARLY;BYEASTER=0",
    "FREQ=HOURLY;INTERVAL=5",
    "FREQ=HOURLY;INTERVAL=4;BYHOUR=1,3,5,7,9,11",
    "FREQ=HOURLY;BYDAY=MO;BYMINUTE=15",
    "FREQ=MINUTELY;INTERVAL=90",
    "FREQ=MINUTELY;INTERVAL=7;BYHOUR=3",
    "FREQ=SECONDLY;INTERVAL=5000",
    "FREQ=DAILY;UNTIL=20260310T000000",
    "FREQ=DAILY;COUNT=40",
    "RRULE:FREQ=DAILY;BYHOUR=1\nRRULE:FREQ=WEEKLY;BYDAY=SA;BYHOUR=5\nEXDATE:20260305T010000",
    "RRULE:FREQ=DAILY;BYHOUR=1\nEXRULE:FREQ=WEEKLY;BYDAY=MO;BYHOUR=1",
]
ANCHORS = [datetime(2019, 3, 7, 13, 17, 23), datetime(2026, 2, 27, 23, 59, 59)]
LOS = [datetime(2026, 3, 1), datetime(2026, 3, 3, 4, 5, 6)]


def dateutils(text: str, anchor: datetime, lo: datetime, hi: datetime) -> list[datetime]:
    rule = rrulestr(text, dtstart=anchor, ignoretz=True, forceset=True)
    return list(itertools.takewhile(lambda t: t < hi, rule.xafter(lo, inc=True)))


@pytest.mark.parametrize("text", RULES)
def test_the_walk_gives_dateutils_own_dates(text: str) -> None:
    for anchor, lo in itertools.product(ANCHORS, LOS):
        hi = lo + timedelta(days=40)
        walked = list(rrule_starts(parse_rrule(text, anchor), lo, hi, Steps(10**7)))
        assert walked == dateutils(text, anchor, lo, hi), (anchor, lo)


def test_a_dtstart_decades_back_is_walked_from_near_lo() -> None:
    parsed = parse_rrule("DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY", datetime(2000, 1, 1))
    lo = datetime(2026, 3, 1, 12)
    steps = Steps(100)
    assert list(rrule_starts(parsed, lo, lo + timedelta(seconds=10), steps)) == [
        lo + timedelta(seconds=s) for s in range(10)
    ]
    assert steps.spent < 50


def test_a_rule_that_never_matches_stops_at_the_horizon() -> None:
    parsed = parse_rrule("FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", datetime(2026, 1, 1))
    lo = datetime(2026, 3, 1)
    steps = Steps(10_000)
    assert list(rrule_starts(parsed, lo, lo + timedelta(days=1), steps)) == []
    assert steps.spent <= 3
    # Ten years: one step per day walked, none of them matched.
    assert list(rrule_starts(parsed, lo, lo + timedelta(days=3653), steps)) == []
    assert 3653 <= steps.spent <= 3700


def test_the_budget_counts_the_periods_that_yield_nothing() -> None:
    parsed = parse_rrule("FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", datetime(2026, 1, 1))
    steps = Steps(500)
    with pytest.raises(OverBudget):
        list(rrule_starts(parsed, datetime(2026, 3, 1), datetime(9000, 1, 1), steps))
    assert steps.spent == 501


def test_each_occurrence_is_a_step() -> None:
    parsed = parse_rrule("FREQ=SECONDLY", datetime(2026, 1, 1))
    lo = datetime(2026, 3, 1)
    with pytest.raises(OverBudget):
        list(rrule_starts(parsed, lo, lo + timedelta(days=1), Steps(1000)))


def test_a_count_rule_is_walked_once_to_its_end() -> None:
    parsed = parse_rrule("DTSTART:20200101T020000\nRRULE:FREQ=DAILY;COUNT=3", datetime(2000, 1, 1))
    assert parsed.rules == () and parsed.rdates == (
        datetime(2020, 1, 1, 2),
        datetime(2020, 1, 2, 2),
        datetime(2020, 1, 3, 2),
    )
    lo = datetime(2020, 1, 2)
    assert list(rrule_starts(parsed, lo, lo + timedelta(days=5), Steps(10))) == [
        datetime(2020, 1, 2, 2),
        datetime(2020, 1, 3, 2),
    ]
    with pytest.raises(OverBudget):
        parse_rrule(f"FREQ=SECONDLY;COUNT={COUNT_STEPS * 10}", datetime(2000, 1, 1))


def test_a_tzid_is_dropped_the_windows_zone_applies() -> None:
    parsed = parse_rrule(
        "DTSTART;TZID=America/New_York:20200101T010000\nRRULE:FREQ=DAILY", datetime(2000, 1, 1)
    )
    lo = datetime(2026, 3, 1)
    assert list(rrule_starts(parsed, lo, lo + timedelta(days=1), Steps(100))) == [
        datetime(2026, 3, 1, 1)
    ]
    assert explicit_dtstart("DTSTART;TZID=X:20200101T010000\nFREQ=DAILY") == datetime(2020, 1, 1, 1)
    assert explicit_dtstart("FREQ=DAILY") is None


def test_cron_fires_forwards_and_backwards_each_a_counted_step() -> None:
    lo = datetime(2026, 3, 1, 10, 30)
    steps = Steps(10 * CRON_STEP)
    assert list(cron_starts("0 * * * *", lo, lo + timedelta(hours=3), steps)) == [
        datetime(2026, 3, 1, 11),
        datetime(2026, 3, 1, 12),
        datetime(2026, 3, 1, 13),
    ]
    assert steps.spent == 4 * CRON_STEP
    fires = cron_fires_before("0 3 * * 1-5", datetime(2026, 3, 1), datetime(2026, 2, 1), steps)
    assert next(fires) == datetime(2026, 2, 27, 3)  # the Friday before that Sunday
    with pytest.raises(OverBudget):
        list(cron_starts("* * * * *", lo, lo + timedelta(days=1), Steps(100 * CRON_STEP)))
    # No fire at all: none, not an error.
    assert list(cron_starts("0 0 30 2 *", lo, lo + timedelta(days=3653), Steps(100))) == []
    assert (cron_minutes("0 2 * * *"), cron_minutes("*/20 * * * *")) == ([0], [0, 20, 40])
    assert cron_minutes("* 2 * * *") is None
