"""When a maintenance window is open: one-off, recurring across DST changes
(rrule and cron in Europe/Berlin), opened or ended by hand; and schedules that
would walk for ever, answered or failed closed within their budget of steps."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from uptime_server.maintenance import schedule as maintenance_schedule
from uptime_server.maintenance.recurrence import Failures, Steps
from uptime_server.maintenance.schedule import (
    QUICK_STEPS,
    Schedule,
    evaluate,
    is_open,
    next_start,
    open_until,
    spans,
    union_seconds,
)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


BERLIN_2AM = {
    "rrule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=0;BYSECOND=0",
    "cron": "0 2 * * *",
}


@pytest.mark.parametrize("kind", sorted(BERLIN_2AM))
def test_recurring_keeps_local_time_across_both_dst_changes(kind):
    s = Schedule(
        duration=3600,
        timezone="Europe/Berlin",
        created_at=utc(2026, 3, 1),
        **{kind: BERLIN_2AM[kind]},
    )
    # Spring forward on 29 March 2026 (02:00 does not exist: taken at the
    # offset before the change, 01:00 UTC); CEST (UTC+2) from the 30th.
    assert [a for a, _b in spans(s, utc(2026, 3, 28), utc(2026, 3, 31))] == [
        utc(2026, 3, 28, 1),
        utc(2026, 3, 29, 1),
        utc(2026, 3, 30, 0),
    ]
    # Fall back on 25 October 2026 at 03:00 CEST: 02:00 happens twice that
    # day, and the first (still CEST, 00:00 UTC) is taken; CET from the 26th.
    assert [a for a, _b in spans(s, utc(2026, 10, 24), utc(2026, 10, 27))] == [
        utc(2026, 10, 24, 0),
        utc(2026, 10, 25, 0),
        utc(2026, 10, 26, 1),
    ]
    assert is_open(s, utc(2026, 3, 30, 0, 30)) and not is_open(s, utc(2026, 3, 30, 1, 30))
    assert is_open(s, utc(2026, 10, 26, 1, 59)) and not is_open(s, utc(2026, 10, 26, 0, 30))
    assert open_until(s, utc(2026, 3, 30, 0, 30)) == utc(2026, 3, 30, 1)
    assert next_start(s, utc(2026, 3, 30, 0, 30)) == utc(2026, 3, 31, 0)


def test_rrule_with_its_own_dtstart_and_count():
    s = Schedule(
        rrule="DTSTART:20261101T230000\nRRULE:FREQ=WEEKLY;COUNT=2",
        duration=7200,
        timezone="Europe/Berlin",
    )
    assert spans(s, utc(2026, 10, 1), utc(2026, 12, 31)) == [
        (utc(2026, 11, 1, 22), utc(2026, 11, 2, 0)),
        (utc(2026, 11, 8, 22), utc(2026, 11, 9, 0)),
    ]
    assert next_start(s, utc(2026, 11, 9)) is None


def test_one_off_and_overlapping_spans_count_once():
    s = Schedule(starts_at=utc(2026, 5, 1, 10), ends_at=utc(2026, 5, 1, 12))
    assert not is_open(s, utc(2026, 5, 1, 9, 59)) and is_open(s, utc(2026, 5, 1, 10))
    assert not is_open(s, utc(2026, 5, 1, 12))  # the end is not in it
    other = Schedule(starts_at=utc(2026, 5, 1, 11), ends_at=utc(2026, 5, 1, 13))
    lo, hi = utc(2026, 5, 1), utc(2026, 5, 2)
    assert union_seconds(spans(s, lo, hi) + spans(other, lo, hi)) == 3 * 3600
    assert union_seconds(spans(s, utc(2026, 5, 1, 11), hi)) == 3600  # clipped


def test_opened_by_hand_until_ended_and_ending_cuts_the_occurrence():
    at = utc(2026, 5, 1, 10)
    manual = Schedule(manual_start=at)
    assert is_open(manual, at + timedelta(days=100))
    assert open_until(manual, at) is None  # until ended
    ended = Schedule(manual_start=at, manual_end=at + timedelta(minutes=5))
    assert open_until(ended, at) == at + timedelta(minutes=5)
    cron = Schedule(cron="0 * * * *", duration=1800, ended_at=utc(2026, 5, 1, 10, 10))
    assert not is_open(cron, utc(2026, 5, 1, 10, 15))
    assert is_open(cron, utc(2026, 5, 1, 10, 5)) and is_open(cron, utc(2026, 5, 1, 11, 5))


# -- under a budget of steps ------------------------------------------------------------

NOW = utc(2026, 3, 10, 12, 0, 30)
PATHOLOGICAL = {
    "secondly from 1970": Schedule(
        rrule="DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY", duration=60, id=41
    ),
    "secondly, 20 days back": Schedule(
        rrule="FREQ=SECONDLY", duration=60, created_at=NOW - timedelta(days=20), id=42
    ),
    "every minute, 30 days long": Schedule(cron="* * * * *", duration=30 * 86400, id=43),
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_whether_open_needs_only_the_last_start(name):
    """Open now (each starts every second or minute): answered from the last start alone."""
    s = PATHOLOGICAL[name]
    found, complete = evaluate(s, NOW, NOW + timedelta(seconds=5), Steps(QUICK_STEPS))
    assert complete and found == [(NOW, NOW + timedelta(seconds=5))]
    assert is_open(s, NOW)


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_a_schedule_past_its_budget_fails_closed_and_logs_its_window(name, caplog, monkeypatch):
    fresh = Failures(maintenance_schedule.log)  # nothing logged yet
    monkeypatch.setattr(maintenance_schedule, "FAILURES", fresh)
    s = PATHOLOGICAL[name]
    found, complete = evaluate(s, NOW - timedelta(days=90), NOW)
    assert (found, complete) == ([], False)  # counted as not open
    assert f"maintenance window {s.id}: its schedule" in caplog.text
    assert spans(s, NOW - timedelta(days=90), NOW) == []
    # Logged once, not on every question.
    assert caplog.text.count(f"maintenance window {s.id}:") == 1


def test_what_fails_closed_is_the_schedule_not_an_opening_by_hand(caplog):
    s = replace(PATHOLOGICAL["secondly from 1970"], id=44, manual_start=NOW - timedelta(hours=1))
    assert spans(s, NOW - timedelta(days=90), NOW) == [(NOW - timedelta(hours=1), NOW)]


def test_a_rule_that_never_matches_is_never_open_and_costs_little():
    s = Schedule(rrule="FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", duration=3600, id=45)
    assert evaluate(s, NOW, NOW + timedelta(seconds=5), Steps(QUICK_STEPS)) == ([], True)
    assert next_start(s, NOW) is None and open_until(s, NOW) is None


def test_a_window_open_every_hour_for_two_never_closes():
    """Its occurrences chain: open_until and next_start stop at CHAIN of them."""
    s = Schedule(cron="0 * * * *", duration=7200, id=46)
    assert is_open(s, NOW)
    assert open_until(s, NOW) is None and next_start(s, NOW) is None
