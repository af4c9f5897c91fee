"""Claims, leases and due times (README.md#running-it-for-real), on SQLite and PostgreSQL."""

from __future__ import annotations

import functools
import os
from datetime import timedelta

import pytest

from tests.conftest import acting_of
from tests.threads import run_at_once
from uptime_server.engine.dispatcher import (
    FIRST_SPREAD_CAP,
    Claim,
    Dispatcher,
    first_offset,
    next_due,
    scheduler_lag,
)
from uptime_server.engine.worker import DatabaseWorker
from uptime_server.models import MonitorLocation
from uptime_server.services import monitors as monitor_service


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_LOCATIONS": "local,eu"}


def claimed_ids(claims):
    return sorted(c.monitor_id for c in claims)


def test_it_claims_due_unpaused_monitors_of_its_location(make_monitor, settings, clock):
    due = [make_monitor(f"due{i}") for i in range(3)]
    paused = make_monitor("paused")
    monitor_service.pause_monitor(acting_of(paused.user), paused, None, now=clock.now())
    make_monitor("eu", locations=["eu"])
    later = make_monitor("later")
    MonitorLocation.update(next_check_at=clock.now() + timedelta(seconds=1)).where(
        MonitorLocation.monitor == later.id
    ).execute()

    claims = Dispatcher(settings, worker_id="w1").claim(clock.now())

    assert claimed_ids(claims) == [m.id for m in due]
    assert all(c.location == "local" and c.lease_owner == "w1/1" for c in claims)
    assert all(c.spec is not None and c.spec.url == "http://127.0.0.1:9/" for c in claims)
    leased = MonitorLocation.select().where(MonitorLocation.lease_owner == "w1/1")
    assert {row.lease_expires_at for row in leased} == {
        clock.now() + timedelta(seconds=settings.lease_seconds)
    }


def test_a_claimed_check_is_not_claimed_again_until_its_lease_expires(
    make_monitor, settings, clock
):
    m = make_monitor()
    first = Dispatcher(settings, worker_id="dead")
    other = Dispatcher(settings, worker_id="alive")
    assert claimed_ids(first.claim(clock.now())) == [m.id]
    assert other.claim(clock.now()) == []
    clock.advance(settings.lease_seconds)
    assert other.claim(clock.now()) == []  # expires strictly after the lease
    clock.advance(1)
    [claim] = other.claim(clock.now())
    assert (claim.monitor_id, claim.lease_owner) == (m.id, "alive/3")


def test_the_lease_is_short_whatever_the_worst_case_run(make_monitor, settings, clock):
    make_monitor(timeout=30, retry_count=3, check_interval=60)  # worst case 150 s
    [claim] = Dispatcher(settings, worker_id="w").claim(clock.now())
    row = MonitorLocation.get(MonitorLocation.id == claim.row_id)
    assert row.lease_expires_at == clock.now() + timedelta(seconds=settings.lease_seconds)


def test_renewal_extends_the_leases_still_held_and_reports_the_lost(make_monitor, settings, clock):
    kept, taken, done = make_monitor("kept"), make_monitor("taken"), make_monitor("done")
    holder = Dispatcher(settings, worker_id="holder")
    claims = {c.monitor_id: c for c in holder.claim(clock.now())}
    clock.advance(settings.lease_seconds + 1)  # expired, not yet taken over
    MonitorLocation.update(lease_owner="other/1").where(
        MonitorLocation.monitor == taken.id
    ).execute()
    holder.release([claims[done.id]])

    lost = holder.renew([c.lease_key for c in claims.values()], clock.now())

    assert lost == {claims[taken.id].lease_key, claims[done.id].lease_key}
    rows = {r.monitor_id: r for r in MonitorLocation.select()}
    assert rows[kept.id].lease_owner == claims[kept.id].lease_owner
    assert rows[kept.id].lease_expires_at == clock.now() + holder.lease
    assert rows[taken.id].lease_owner == "other/1" and rows[done.id].lease_owner is None
    late = Dispatcher(settings, worker_id="late").claim(clock.now())
    assert kept.id not in claimed_ids(late)  # only the renewed lease is alive


def test_renewal_touches_only_the_keys_given(make_monitor, settings, clock):
    a, b = make_monitor("a"), make_monitor("b")
    d = Dispatcher(settings, worker_id="w")
    claims = {c.monitor_id: c for c in d.claim(clock.now())}
    clock.advance(settings.lease_seconds + 1)
    assert d.renew([claims[a.id].lease_key], clock.now()) == set()
    assert claimed_ids(Dispatcher(settings, worker_id="x").claim(clock.now())) == [b.id]


def test_another_location_has_its_own_dispatcher(make_monitor, settings, clock):
    both = make_monitor("both", locations=["local", "eu"])
    eu_only = make_monitor("eu", locations=["eu"])
    eu = Dispatcher(settings, location="eu", worker_id="eu")
    local = Dispatcher(settings, worker_id="local")
    assert claimed_ids(eu.claim(clock.now())) == [both.id, eu_only.id]
    assert claimed_ids(local.claim(clock.now())) == [both.id]


def test_claims_come_oldest_due_first_in_batches(make_monitor, settings, clock):
    monitors = [make_monitor(f"m{i}") for i in range(5)]
    for i, m in enumerate(monitors):
        MonitorLocation.update(next_check_at=clock.now() - timedelta(seconds=i)).where(
            MonitorLocation.monitor == m.id
        ).execute()
    d = Dispatcher(settings, worker_id="w", batch_size=2)
    assert [c.monitor_id for c in d.claim(clock.now())] == [monitors[4].id, monitors[3].id]
    assert len(d.claim(clock.now(), limit=10)) == 2  # the batch size caps a claim
    assert len(d.claim(clock.now())) == 1


def test_release_gives_back_a_due_check_and_push_forward_moves_it(make_monitor, settings, clock):
    a, b = make_monitor("a"), make_monitor("b")
    d = Dispatcher(settings, worker_id="w")
    claims = {c.monitor_id: c for c in d.claim(clock.now())}
    d.release([claims[a.id]])
    d.push_forward([claims[b.id]], clock.now())
    row_a = MonitorLocation.get(MonitorLocation.monitor == a.id)
    row_b = MonitorLocation.get(MonitorLocation.monitor == b.id)
    assert (row_a.lease_owner, row_a.next_check_at) == (None, clock.now())
    assert row_b.lease_owner is None
    assert row_b.next_check_at == next_due(claims[b.id], clock.now())
    assert claimed_ids(Dispatcher(settings).claim(clock.now())) == [a.id]


def test_a_stale_holder_cannot_release_a_claim_taken_over(make_monitor, settings, clock):
    make_monitor()
    dead = Dispatcher(settings, worker_id="dead")
    [old] = dead.claim(clock.now())
    clock.advance(settings.lease_seconds + 1)
    [new] = Dispatcher(settings, worker_id="new").claim(clock.now())
    dead.release([old])
    assert MonitorLocation.get_by_id(new.row_id).lease_owner == new.lease_owner


def test_two_dispatchers_in_two_threads_never_claim_one_check_twice(make_monitor, settings, clock):
    ids = {make_monitor(f"m{i}").id for i in range(300)}
    got: dict[str, list[int]] = {"a": [], "b": []}
    dispatchers = {name: Dispatcher(settings, worker_id=name, batch_size=3) for name in got}

    def work(name: str) -> None:
        while claims := dispatchers[name].claim(clock.now()):
            got[name].extend(c.monitor_id for c in claims)

    run_at_once(*(functools.partial(work, name) for name in got))
    assert not set(got["a"]) & set(got["b"])
    assert sorted(got["a"] + got["b"]) == sorted(ids)


# -- due times (pure) -------------------------------------------------------


def _claim(clock, *, interval=60, first=False, due=None):
    return Claim(
        row_id=1,
        monitor_id=7,
        monitor_created_at=clock.now(),
        location="local",
        due=due or clock.now(),
        interval=interval,
        first=first,
        lease_owner="w/1",
        spec=None,
    )


def test_the_next_due_time_is_drift_free(clock):
    claim = _claim(clock)
    done_at = clock.now() + timedelta(seconds=2.5)  # started late, ran long
    assert next_due(claim, done_at) == claim.due + timedelta(seconds=60)


def test_the_first_run_adds_a_stable_per_monitor_offset(clock):
    offsets = {first_offset(i, "local", 60) for i in range(200)}
    assert all(timedelta(0) <= o < timedelta(seconds=FIRST_SPREAD_CAP) for o in offsets)
    assert len(offsets) > 150  # spread, not lumped
    assert first_offset(7, "local", 60) == first_offset(7, "local", 60)
    assert first_offset(7, "local", 10) < timedelta(seconds=10)  # never beyond the interval
    claim = _claim(clock, first=True)
    assert next_due(claim, clock.now()) == claim.due + timedelta(seconds=60) + first_offset(
        7, "local", 60
    )


def test_after_a_stall_missed_slots_are_skipped_and_the_phase_kept(clock):
    claim = _claim(clock, interval=60)
    woke = clock.now() + timedelta(hours=3, seconds=10)
    following = next_due(claim, woke)
    assert following - woke >= timedelta(seconds=30)  # at least half an interval away
    assert following - woke <= timedelta(seconds=90)
    assert (following - claim.due) % timedelta(seconds=60) == timedelta(0)


def test_scheduler_lag_is_how_late_the_oldest_claimable_check_is(make_monitor, settings, clock):
    # The one definition behind /healthz, /metrics and a running scheduler.
    now = clock.now()
    local, eu, paused = make_monitor("local"), make_monitor("eu", locations=["eu"]), make_monitor()
    monitor_service.pause_monitor(acting_of(paused.user), paused, None, now=now)
    for monitor, late in ((local, 30), (eu, 90), (paused, 600)):
        MonitorLocation.update(next_check_at=now - timedelta(seconds=late)).where(
            MonitorLocation.monitor == monitor.id
        ).execute()

    assert scheduler_lag(now) == 90.0  # every location; paused monitors never count
    assert scheduler_lag(now, location="local") == 30.0
    # Claimed and not started yet: only the scheduler holding them knows.
    assert scheduler_lag(now, location="local", waiting=[now - timedelta(seconds=45)]) == 45.0
    Dispatcher(settings, location="eu", worker_id="w").claim(now)
    assert scheduler_lag(now) == 30.0  # a leased row is the claimer's to report
    assert scheduler_lag(now, location="local", waiting=[now + timedelta(seconds=5)]) == 30.0
    MonitorLocation.update(next_check_at=now + timedelta(seconds=5)).execute()
    assert scheduler_lag(now) == 0.0


def test_the_oldest_due_of_a_location_is_the_first_claimable_in_index_order(
    make_monitor, settings, clock
):
    """Leased and paused rows before it are passed over, an expired lease and a
    future due time count, a row without a due time never does."""
    now = clock.now()
    leased, paused, unscheduled, expired, future = (make_monitor(f"m{i}") for i in range(5))
    monitor_service.pause_monitor(acting_of(paused.user), paused, None, now=now)
    for monitor, due in ((leased, -300), (paused, -200), (expired, -100), (future, 50)):
        MonitorLocation.update(next_check_at=now + timedelta(seconds=due)).where(
            MonitorLocation.monitor == monitor.id
        ).execute()
    MonitorLocation.update(next_check_at=None).where(
        MonitorLocation.monitor == unscheduled.id
    ).execute()
    MonitorLocation.update(lease_owner="x/1", lease_expires_at=now + timedelta(seconds=9)).where(
        MonitorLocation.monitor == leased.id
    ).execute()
    MonitorLocation.update(lease_owner="y/1", lease_expires_at=now - timedelta(seconds=1)).where(
        MonitorLocation.monitor == expired.id
    ).execute()
    dispatcher = Dispatcher(settings, worker_id="w")

    assert dispatcher.oldest_due(now) == now - timedelta(seconds=100)
    assert scheduler_lag(now) == scheduler_lag(now, location="local") == 100.0
    MonitorLocation.update(next_check_at=now + timedelta(seconds=60)).where(
        MonitorLocation.monitor == expired.id
    ).execute()
    assert dispatcher.oldest_due(now) == now + timedelta(seconds=50)  # later counts too
    assert Dispatcher(settings, location="eu", worker_id="w").oldest_due(now) is None


# --- claims made by the database worker ----------------------------------


def test_claims_made_by_the_database_worker_hold_their_leases(make_monitor, settings, clock):
    monitors = [make_monitor(f"c{i}") for i in range(3)]
    make_monitor("eu only", locations=["eu"])  # another location's: not claimed here
    child = DatabaseWorker(settings)
    here = Dispatcher(settings, worker_id="w")

    def claim() -> list:
        request = here.next_request(clock.now())
        assert request is not None
        return child.claim(request)

    try:
        claims = claim()
        assert child.pid is not None and child.pid != os.getpid()
        assert claimed_ids(claims) == sorted(m.id for m in monitors)
        assert {c.lease_owner for c in claims} == {"w/1"}  # the parent names the batch
        assert all(c.location == "local" and c.spec is not None for c in claims)
        leased = MonitorLocation.select().where(MonitorLocation.lease_owner == "w/1")
        assert {row.lease_expires_at for row in leased} == {
            clock.now() + timedelta(seconds=settings.lease_seconds)
        }
        other = Dispatcher(settings, worker_id="other")
        assert other.claim(clock.now()) == []
        # The parent renews them as its own; nobody takes them over meanwhile.
        clock.advance(settings.lease_seconds)
        assert here.renew([c.lease_key for c in claims], clock.now()) == set()
        clock.advance(settings.lease_seconds)
        assert other.claim(clock.now()) == []
        assert claim() == []  # and the holder claims nothing twice
        clock.advance(settings.lease_seconds + 1)
        assert claimed_ids(other.claim(clock.now())) == sorted(m.id for m in monitors)
    finally:
        child.close()


def test_a_claim_after_the_database_worker_died_starts_a_new_one(make_monitor, settings, clock):
    first, second = make_monitor("first"), make_monitor("second")
    MonitorLocation.update(next_check_at=clock.now() + timedelta(seconds=5)).where(
        MonitorLocation.monitor == second.id
    ).execute()
    child = DatabaseWorker(settings)
    here = Dispatcher(settings, worker_id="w")
    try:
        assert claimed_ids(child.claim(here.next_request(clock.now()))) == [first.id]
        dead = child._process
        dead.kill()
        dead.join(10)
        clock.advance(5)
        [claim] = child.claim(here.next_request(clock.now()))
        assert (claim.monitor_id, claim.lease_owner) == (second.id, "w/2")
        assert child._process is not dead and child._process.is_alive()
    finally:
        child.close()
