"""The engine's health verdict (``engine/health.py``): a pure function of facts and now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from uptime_server.engine.health import EngineFacts, stall_limit, verdict

T0 = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def facts(**kw: object) -> EngineFacts:
    values: dict[str, object] = dict(
        started_at=T0,
        last_write_at=None,
        last_claim_at=None,
        worker_unavailable_since=None,
        due=[],
    )
    values.update(kw)
    return EngineFacts(**values)  # type: ignore[arg-type]


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_the_limit_is_three_of_the_shortest_intervals_and_never_below_30_s() -> None:
    assert stall_limit([5, 60]) == 30.0
    assert stall_limit([20, 60]) == 60.0
    assert stall_limit([3600]) == 10800.0


def test_an_engine_with_nothing_due_is_healthy_however_long_it_was_quiet() -> None:
    assert verdict(facts(last_write_at=at(0)), at(86400)) is None
    # Due later, not now.
    assert verdict(facts(due=[(at(100_000), 5)]), at(86400)) is None


def test_checks_due_with_nothing_recorded_or_claimed_for_three_intervals_is_a_stall() -> None:
    # Written at 100 s; a 5 s check claimed and due since 101 s is still not written.
    stuck = facts(last_write_at=at(100), last_claim_at=at(101), due=[(at(101), 5)])
    assert verdict(stuck, at(131)) is None  # 30 s quiet: not more than the limit
    assert verdict(stuck, at(131.5)) == (
        "no check recorded or claimed for 30 s while checks are due (the limit is 30 s)"
    )


def test_a_recent_write_or_claim_is_not_a_stall() -> None:
    due = [(at(0), 5)]
    assert verdict(facts(due=due, last_write_at=at(100)), at(110)) is None
    assert verdict(facts(due=due, last_claim_at=at(100)), at(110)) is None
    assert verdict(facts(due=due, last_write_at=at(100)), at(140)) is not None


def test_a_check_just_due_after_a_long_quiet_spell_is_not_a_stall() -> None:
    # An hourly monitor: nothing done for an hour is normal, and it is due only now.
    hourly = facts(last_write_at=at(0), due=[(at(3600), 3600)])
    assert verdict(hourly, at(3601)) is None
    # Three of its intervals later and still not claimed: stalled.
    assert verdict(hourly, at(3600 + 10801)) is not None


def test_a_long_running_check_is_judged_by_its_own_interval() -> None:
    # Claimed at 0, a 60 s check still running (its timeout, retries): 180 s allowed.
    long = facts(last_claim_at=at(0), due=[(at(0), 60)])
    assert verdict(long, at(179)) is None
    assert verdict(long, at(181)) is not None


def test_the_start_counts_as_done_so_a_fresh_engine_is_not_stalled() -> None:
    started = facts(started_at=at(1000), due=[(at(0), 5)])
    assert verdict(started, at(1010)) is None
    assert verdict(started, at(1031)) is not None


def test_a_worker_that_cannot_use_the_database_is_unhealthy_at_once() -> None:
    down = facts(last_write_at=at(99), worker_unavailable_since=at(95))
    reason = "the engine's database worker cannot use the database (for 5 s)"
    assert verdict(down, at(100)) == reason
