"""When a maintenance window is open: one-off, recurring across DST changes
(rrule and cron in Europe/Berlin), and opened or ended by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from uptime_server.maintenance_schedule import (
    Schedule,
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
