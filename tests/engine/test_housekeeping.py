"""Housekeeping runs its periodic jobs by the time ``loop(now)`` is given."""

from __future__ import annotations

from datetime import timedelta

import pytest
import schedule

from uptime_server.engine.housekeeping import MAX_SLEEP, Housekeeping, purge_expired_sign_ins
from uptime_server.models import Session


@pytest.fixture
def keeper(clock):
    return Housekeeping(clock)


def test_it_runs_due_jobs_with_the_loop_time(keeper, clock):
    seen = []
    keeper.register("hourly", 3600, seen.append)
    keeper.register("broken", 60, lambda now: 1 / 0)

    assert keeper.loop(clock.now()) == 60  # nothing due yet: sleep until "broken"
    assert keeper.runs == {"hourly": 0, "broken": 0}

    assert keeper.loop(clock.advance(60)) == 60
    assert keeper.runs == {"hourly": 0, "broken": 1}

    keeper.loop(clock.advance(3540))
    assert seen == [clock.now()]
    assert keeper.runs == {"hourly": 1, "broken": 2}  # the broken job did not stop the other


def test_the_given_now_decides_not_the_clock(keeper, clock):
    seen = []
    keeper.register("hourly", 3600, seen.append)
    later = clock.now() + timedelta(hours=1)

    keeper.loop(later)
    assert seen == [later]  # the clock itself has not moved
    keeper.loop(later + timedelta(minutes=59))
    assert seen == [later]
    keeper.loop(later + timedelta(minutes=60))
    assert seen == [later, later + timedelta(minutes=60)]


def test_missed_runs_are_skipped_after_a_stall(keeper, clock):
    keeper.register("minutely", 60, lambda now: None)

    assert keeper.loop(clock.advance(minutes=10)) == 60
    assert keeper.runs == {"minutely": 1}


def test_it_sleeps_at_most_max_sleep(keeper, clock):
    assert keeper.loop(clock.now()) == MAX_SLEEP  # no jobs at all
    keeper.register("daily", 86400, lambda now: None)
    assert keeper.loop(clock.now()) == MAX_SLEEP


def test_a_name_is_registered_once(keeper):
    keeper.register("one", 3600, lambda now: None)
    with pytest.raises(ValueError, match="already registered"):
        keeper.register("one", 60, lambda now: None)


def test_calendar_schedules_are_refused(keeper):
    # They would read the local wall clock, which the injected clock does not drive.
    with pytest.raises(schedule.ScheduleValueError):
        keeper.scheduler.every().day.at("10:00").do(lambda: None)
    assert keeper.scheduler.get_jobs() == []


def test_purge_removes_expired_sessions_only(db, alice, bob, clock):
    Session.update(expires_at=clock.now() - timedelta(seconds=1)).where(
        Session.user == bob.user
    ).execute()
    assert purge_expired_sign_ins(clock.now()) == 1
    assert [s.user_id for s in Session.select()] == [alice.user.id]
