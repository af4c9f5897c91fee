"""The check component against real local HTTP targets, time from a ManualClock.

No test sleeps for the scheduler: each step calls ``loop(now)`` directly and
``settle()`` waits for the real HTTP checks and the writer, then the clock is
moved by hand.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import defaultdict
from datetime import timedelta

import peewee
import pytest

from tests.conftest import acting_of
from tests.engine.traces import traces
from tests.outcomes import outcome
from uptime_server.app import create_app
from uptime_server.engine.dispatcher import Dispatcher, first_offset
from uptime_server.engine.probe import Prober
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.scheduler import BUSY_POLL, BUSY_POLL_MAX, CheckScheduler
from uptime_server.engine.worker import DatabaseWorker, InProcess, WorkerError
from uptime_server.models import CheckRun, Monitor, MonitorLocation, Notification
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors as monitor_service


async def no_sleep(seconds: float) -> None:
    pass


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_LOCATIONS": "local,eu", "UPTIME_CHECK_CONCURRENCY": "20"}


@pytest.fixture
def make_monitor(db, alice, settings, clock, target):
    def make(key, kind="ok", **fields):
        body = {
            "name": key,
            "url": target.url(kind, key),
            "type": "http",
            "timeout": 5,
            "check_interval": 10,
            **fields,
        }
        cfg = MonitorConfig.model_validate(body, context={"settings": settings})
        return monitor_service.create_monitor(alice.acting, cfg, now=clock.now(), settings=settings)

    return make


@pytest.fixture
def make_scheduler(db, settings, clock):
    made: list[CheckScheduler] = []

    def make(*, work=None, **kwargs):
        """A scheduler whose claims and records are *work* (by default: in this process)."""
        kwargs.setdefault("sleep", no_sleep)
        work = InProcess(settings) if work is None else work
        scheduler = CheckScheduler(settings, claims=work, records=work, clock=clock, **kwargs)
        made.append(scheduler)
        return scheduler

    yield make
    for scheduler in made:
        scheduler.close()


def step(clock, schedulers, seconds):
    """One tick: every scheduler loops, the checks end and are written, time moves."""
    for scheduler in schedulers:
        scheduler.loop(clock.now())
    for scheduler in schedulers:
        assert scheduler.settle(30)
    clock.advance(seconds)


def runs_of(monitor):
    return list(
        CheckRun.select().where(CheckRun.monitor == monitor.id).order_by(CheckRun.checked_at)
    )


def test_monitors_are_dispatched_on_time(make_monitor, make_scheduler, clock, alice, target):
    start = clock.now()
    monitors = [make_monitor(f"m{i}") for i in range(3)]
    scheduler = make_scheduler()

    assert scheduler.loop(clock.now()) == pytest.approx(1.0)  # idle: look again soon
    assert scheduler.settle(30)
    for m in monitors:
        body = alice.get(f"/api/v1/monitors/{m.id}").json["data"]
        offset = first_offset(m.id, "local", 10)
        assert body["status"] == "online"
        assert body["last_check"] == "2026-11-22T12:00:00Z"
        assert body["last_success"] == "2026-11-22T12:00:00Z"
        assert body["response_time"] is not None
        row = MonitorLocation.get(MonitorLocation.monitor == m.id)
        assert row.next_check_at == start + timedelta(seconds=10) + offset
        assert row.lease_owner is None

    # Nothing runs before its due time; each runs once when it is due.
    for _ in range(40):
        step(clock, [scheduler], 0.5)
    for i, m in enumerate(monitors):
        due = start + timedelta(seconds=10) + first_offset(m.id, "local", 10)
        times = [r.checked_at for r in runs_of(m)]
        assert times[0] == start
        assert due <= times[1] < due + timedelta(seconds=0.5)
        assert [b - a for a, b in zip(times[1:], times[2:], strict=False)] == [
            timedelta(seconds=10)
        ] * (len(times) - 2)
        assert target.hits[f"m{i}"] == len(times)


def test_loop_reports_the_time_until_the_next_due_check(make_monitor, make_scheduler, clock):
    m = make_monitor("a")
    scheduler = make_scheduler()
    scheduler.loop(clock.now())
    scheduler.settle(30)
    due = MonitorLocation.get(MonitorLocation.monitor == m.id).next_check_at
    clock.set(due - timedelta(seconds=0.25))
    assert scheduler.loop(clock.now()) == pytest.approx(0.25)


@pytest.mark.parametrize("threads", [False, True], ids=["interleaved", "threads"])
def test_two_schedulers_on_one_database_never_run_a_monitor_twice_in_an_interval(
    make_monitor, make_scheduler, clock, target, threads
):
    monitors = [make_monitor(f"m{i}") for i in range(12)]
    pair = [make_scheduler(worker_id=w, batch_size=5) for w in ("one", "two")]
    start = clock.now()
    for _ in range(4 * 8):  # 8 intervals of 10 s in steps of 2.5 s
        if threads:
            workers = [
                threading.Thread(target=lambda s=s: [s.loop(clock.now()) for _ in range(3)])
                for s in pair
            ]
            for w in workers:
                w.start()
            for w in workers:
                w.join(30)
        else:
            for _ in range(3):
                for s in pair:
                    s.loop(clock.now())
        for s in pair:
            assert s.settle(30)
        clock.advance(2.5)
    elapsed = clock.now() - start
    for i, m in enumerate(monitors):
        times = [r.checked_at for r in runs_of(m)]
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert all(gap >= timedelta(seconds=10) for gap in gaps), (m.id, times)
        # ...and none was skipped: one run per interval since the first.
        assert len(times) >= elapsed // timedelta(seconds=10) - 1
        assert target.hits[f"m{i}"] == len(times)
    if not threads:
        # Interleaved, both get work; in threads one may win every race, which
        # is fine: what matters is that no monitor ran twice.
        assert pair[0].dispatched and pair[1].dispatched


def test_after_a_stall_each_overdue_monitor_runs_once(make_monitor, make_scheduler, clock):
    monitors = [make_monitor(f"m{i}") for i in range(10)]
    scheduler = make_scheduler()
    step(clock, [scheduler], 0)
    clock.advance(hours=2)  # suspended: 720 intervals missed
    woke = clock.now()
    for _ in range(10):
        step(clock, [scheduler], 0.5)  # 5 s: half an interval
    for m in monitors:
        since = [r for r in runs_of(m) if r.checked_at >= woke]
        assert [r.checked_at for r in since] == [woke]
        row = MonitorLocation.get(MonitorLocation.monitor == m.id)
        assert row.next_check_at >= woke + timedelta(seconds=5)


class CrashingProber(Prober):
    """Raises for one URL: a bug in our code, not a failing target."""

    def __init__(self, crash_url: str) -> None:
        super().__init__()
        self.crash_url = crash_url

    async def run(self, spec, *, sleep=None):  # type: ignore[no-untyped-def]
        if spec.url == self.crash_url:
            raise RuntimeError("probe exploded")
        return await super().run(spec, sleep=no_sleep)


def test_a_crashing_probe_does_not_stop_the_others(make_monitor, make_scheduler, clock, caplog):
    bad = make_monitor("bad")
    good = [make_monitor(f"good{i}") for i in range(3)]
    scheduler = make_scheduler(prober=CrashingProber(bad.url))
    for _ in range(3):
        step(clock, [scheduler], 10)
    assert runs_of(bad) == []
    assert all(len(runs_of(m)) >= 2 for m in good)
    row = MonitorLocation.get(MonitorLocation.monitor == bad.id)
    assert row.lease_owner is None and row.next_check_at > clock.now() - timedelta(seconds=10)
    assert "probe exploded" in caplog.text


def test_a_monitor_whose_next_due_time_fails_does_not_lose_the_batch(
    make_monitor, make_scheduler, clock, alice, caplog
):
    """A heartbeat whose cron the API would refuse, edited in the database, is due with
    three HTTP monitors: their results are recorded, it waits for its next slot."""
    good = [make_monitor(f"good{i}") for i in range(3)]
    created = alice.post(
        "/api/v1/monitors", json={"name": "hb", "type": "heartbeat", "period": 60, "grace": 0}
    )
    assert created.status_code == 201, created.json
    broken = created.json["data"]["id"]
    Monitor.update(period=None, cron="61 * * * *").where(Monitor.id == broken).execute()
    MonitorLocation.update(next_check_at=clock.now()).where(
        MonitorLocation.monitor == broken
    ).execute()
    scheduler = make_scheduler()
    step(clock, [scheduler], 1)
    assert all(len(runs_of(m)) == 1 for m in good)
    assert f"monitor {broken}: its next due time failed" in caplog.text
    rows = MonitorLocation.select().where(MonitorLocation.monitor == broken)
    assert all(r.lease_owner is None and r.next_check_at > clock.now() for r in rows)
    assert CheckRun.select().where(CheckRun.monitor == broken).count() == 0


def test_a_paused_monitor_is_never_checked(make_monitor, make_scheduler, clock, target):
    paused = make_monitor("paused")
    make_monitor("running")
    monitor_service.pause_monitor(acting_of(paused.user), paused, "maintenance", now=clock.now())
    scheduler = make_scheduler()
    for _ in range(10):
        step(clock, [scheduler], 5)
    assert target.hits["paused"] == 0 and runs_of(paused) == []
    assert target.hits["running"] >= 4
    assert Monitor.get_by_id(paused.id).status == "pending"


def test_a_failing_target_goes_offline_and_opens_one_incident(
    make_monitor, make_scheduler, clock, alice
):
    m = make_monitor("down", kind="status/503", retry_count=2)
    scheduler = make_scheduler()
    for _ in range(3):
        step(clock, [scheduler], 10)
    body = alice.get(f"/api/v1/monitors/{m.id}").json["data"]
    assert body["status"] == "offline"
    assert body["last_failure"] is not None and body["last_success"] is None
    assert {r.attempts for r in runs_of(m)} == {3}  # retries did not sleep
    assert Notification.select().where(Notification.monitor == m.id).count() == 1


def test_each_location_runs_its_own_checks(make_monitor, make_scheduler, clock, target):
    local = make_monitor("local")
    eu = make_monitor("eu", locations=["eu"])
    both = make_monitor("both", locations=["local", "eu"])
    step(clock, [make_scheduler(), make_scheduler(location="eu")], 1)
    assert {r.location for r in runs_of(local)} == {"local"}
    assert {r.location for r in runs_of(eu)} == {"eu"}
    assert sorted(r.location for r in runs_of(both)) == ["eu", "local"]
    assert (target.hits["local"], target.hits["eu"], target.hits["both"]) == (1, 1, 2)


def test_a_dead_process_claims_are_taken_over_after_one_lease(
    make_monitor, make_scheduler, settings, clock, target
):
    m = make_monitor("orphan")
    Dispatcher(settings, worker_id="dead").claim(clock.now())  # then the process died
    scheduler = make_scheduler()
    step(clock, [scheduler], settings.lease_seconds - 1)
    assert target.hits["orphan"] == 0
    step(clock, [scheduler], 2)  # lease expired
    step(clock, [scheduler], 0)
    assert target.hits["orphan"] == 1 and len(runs_of(m)) == 1


def test_a_slow_check_keeps_its_lease_while_its_holder_lives(
    make_monitor, make_scheduler, settings, clock, target
):
    m = make_monitor("slow", kind="held")
    holder, other = make_scheduler(worker_id="holder"), make_scheduler(worker_id="other")
    holder.loop(clock.now())
    assert target.arrived["slow"].wait(10)
    for _ in range(9):  # three whole leases, renewed every third
        clock.advance(holder.renew_every)
        holder.loop(clock.now())
        other.loop(clock.now())
    row = MonitorLocation.get(MonitorLocation.monitor == m.id)
    assert row.lease_owner.startswith("holder/")
    assert row.lease_expires_at == clock.now() + timedelta(seconds=settings.lease_seconds)
    target.released["slow"].set()
    assert holder.settle(30) and other.settle(30)
    assert target.hits["slow"] == 1 and len(runs_of(m)) == 1
    assert holder.lost_results == 0


def test_waiting_for_running_checks_renews_their_leases(
    make_monitor, make_scheduler, settings, clock, target
):
    m = make_monitor("slow", kind="held")
    holder = make_scheduler(worker_id="holder")
    holder.loop(clock.now())
    assert target.arrived["slow"].wait(10)
    clock.advance(settings.lease_seconds + 1)  # expired, nobody took it yet
    holder.renew_every = 0.05
    assert not holder.settle(0.2)  # still held: settle (and shutdown) renew meanwhile
    row = MonitorLocation.get(MonitorLocation.monitor == m.id)
    assert row.lease_expires_at == clock.now() + timedelta(seconds=settings.lease_seconds)
    target.released["slow"].set()
    assert holder.settle(30) and len(runs_of(m)) == 1


def test_a_check_taken_over_after_its_lease_expired_has_its_result_dropped(
    make_monitor, make_scheduler, settings, clock, target
):
    m = make_monitor("slow", kind="held")
    holder = make_scheduler(worker_id="holder")
    holder.loop(clock.now())
    assert target.arrived["slow"].wait(10)
    clock.advance(settings.lease_seconds + 1)  # the holder stalled: no renewal in time
    [taken] = Dispatcher(settings, worker_id="other").claim(clock.now())
    holder.loop(clock.now())  # its renewal finds the lease taken
    target.released["slow"].set()
    assert holder.settle(30)
    assert holder.lost_results == 1 and runs_of(m) == []
    assert MonitorLocation.get(MonitorLocation.monitor == m.id).lease_owner == taken.lease_owner


def test_the_writer_batches_results(make_monitor, make_scheduler, settings, clock):
    monitors = [make_monitor(f"m{i}") for i in range(30)]

    class CountingRecorder(Recorder):
        calls = 0

        def record(self, outcomes, *, now):  # type: ignore[no-untyped-def]
            CountingRecorder.calls += 1
            return super().record(outcomes, now=now)

    scheduler = make_scheduler(work=InProcess(settings, recorder=CountingRecorder(settings)))
    step(clock, [scheduler], 0)
    assert sum(len(runs_of(m)) for m in monitors) == 30
    assert CountingRecorder.calls < 30


def test_shutdown_drains_running_checks_and_gives_back_the_rest(
    make_monitor, make_scheduler, settings_env, clock, target, db
):
    from uptime_server.config import load_settings

    settings = load_settings({**settings_env, "UPTIME_CHECK_CONCURRENCY": "1"})
    slow = make_monitor("slow", kind="slow", url=target.url("slow", "slow") + "?s=0.5")
    waiting = make_monitor("waiting")
    here = InProcess(settings)
    scheduler = CheckScheduler(settings, claims=here, records=here, clock=clock, sleep=no_sleep)
    scheduler.loop(clock.now())  # room for 2: both claimed, one slot
    assert target.arrived["slow"].wait(10)
    scheduler.shutdown(grace=10)

    [run] = runs_of(slow)
    assert run.status == "online"
    assert runs_of(waiting) == []
    row = MonitorLocation.get(MonitorLocation.monitor == waiting.id)
    assert (row.lease_owner, row.next_check_at) == (None, clock.now())  # due, free
    assert scheduler.loop(clock.now()) == 1.0  # stopped: claims nothing more
    assert MonitorLocation.get(MonitorLocation.monitor == waiting.id).lease_owner is None


def test_lag_is_how_late_the_most_overdue_check_is(make_monitor, make_scheduler, settings, clock):
    make_monitor("a")
    scheduler = make_scheduler()
    assert scheduler.lag() == 0.0
    clock.advance(30)
    assert scheduler.lag() == 30.0
    app = create_app(settings, clock=clock, bind_database=False, services=scheduler.services)
    assert app.test_client().get("/healthz").json["scheduler_lag_seconds"] == 30.0
    step(clock, [scheduler], 0)
    assert scheduler.lag() == 0.0
    assert scheduler.dispatch_lags and scheduler.dispatch_lags[-1] == 30.0


def test_counts_per_monitor_match_the_target(make_monitor, make_scheduler, clock, target):
    monitors = [make_monitor(f"k{i}") for i in range(5)]
    scheduler = make_scheduler()
    for _ in range(20):
        step(clock, [scheduler], 1)
    seen = defaultdict(int)
    for run in CheckRun.select():
        seen[run.monitor_id] += 1
    assert [seen[m.id] for m in monitors] == [target.hits[f"k{i}"] for i in range(5)]


def test_the_daemon_writes_from_a_child_process(
    make_monitor, make_scheduler, settings, clock, alice
):
    monitors = [make_monitor(f"p{i}") for i in range(5)]
    worker = DatabaseWorker(settings)
    scheduler = make_scheduler(work=worker)
    step(clock, [scheduler], 0)
    assert scheduler.claims is worker and scheduler.records is worker
    assert worker.pid is not None and worker.pid != os.getpid()
    for m in monitors:
        assert alice.get(f"/api/v1/monitors/{m.id}").json["data"]["status"] == "online"
        assert MonitorLocation.get(MonitorLocation.monitor == m.id).lease_owner is None


def test_a_dead_database_worker_is_started_again(make_monitor, settings, clock):
    m = make_monitor("r")
    run = outcome(m, clock, True)
    child = DatabaseWorker(settings)
    try:
        [done] = child.record([run], clock.now(), want_results=True)
        assert done.run_status == "online" and done.run_id is not None
        first = child._process
        first.kill()
        first.join(10)
        [again] = child.record([run], clock.now(), want_results=True)
        assert again.run_id == done.run_id + 1
        assert child._process is not first
        # Dying in the middle of a batch fails that batch (the writer retries it).
        child._records.conn.close()
        with pytest.raises(WorkerError):
            child.record([run], clock.now())
    finally:
        child.close()


def test_a_check_in_flight_when_its_monitor_is_deleted_lands_on_no_other_monitor(
    make_monitor, make_scheduler, clock, alice, bob, target
):
    doomed = make_monitor("doomed", url=target.url("held", "doomed") + "?status=503")
    scheduler = make_scheduler()
    scheduler.loop(clock.now())
    assert target.arrived["doomed"].wait(10), "the check never started"

    assert alice.delete(f"/api/v1/monitors/{doomed.id}").status_code == 200
    clock.advance(1)
    body = {"name": "bob's", "url": target.url("ok", "bobs"), "type": "http"}
    created = bob.post("/api/v1/monitors", json=body)
    assert created.status_code == 201
    newcomer = created.json["data"]["id"]
    before = traces(newcomer)
    target.released["doomed"].set()  # the check ends: 503, an incident were it recorded
    assert scheduler.settle(30)

    assert target.hits["doomed"] == 1
    assert traces(newcomer) == before
    assert (before["runs"], before["notifications"], before["outbox"]) == (0, 0, 0)
    assert bob.get(f"/api/v1/monitors/{newcomer}").json["data"]["status"] == "pending"
    assert CheckRun.select().count() == 0
    assert newcomer != doomed.id  # ids are never handed out again


def test_a_busy_scheduler_looks_again_when_about_enough_checks_have_ended(make_scheduler, clock):
    # The rate is measured on the injected clock's monotonic time, so the
    # windows below are exact however loaded the machine is.
    scheduler = make_scheduler()
    assert scheduler.min_claim == 10  # concurrency 20
    assert scheduler._until_room(0) == BUSY_POLL  # no rate measured yet

    def rate(ended: int, seconds: float, room: int = 0) -> float:
        """The wait after *ended* checks ended in a window of *seconds*."""
        scheduler._rate_mark = (clock.monotonic(), scheduler.ended)
        clock.advance(seconds)
        scheduler.ended += ended
        return scheduler._until_room(room)

    assert rate(60, 0.6) == pytest.approx(0.1)  # 10 more to end at 100/s
    assert rate(120, 0.6) == pytest.approx(0.05)  # at 200/s
    # Within the next window (0.5 s) the last rate holds, whatever ended since.
    clock.advance(0.4)
    scheduler.ended += 1000
    assert scheduler._until_room(0) == pytest.approx(0.05)
    assert rate(120, 0.6, room=4) == pytest.approx(0.03)  # 6 more at 200/s
    assert rate(3000, 0.6) == BUSY_POLL  # never more often than this
    assert rate(6, 0.6) == BUSY_POLL_MAX  # nor less
    # A window of up to twice the 0.5 s is a rate; a longer one spans idle time.
    assert rate(198, 0.99) == pytest.approx(0.05)
    assert rate(202, 1.01) == BUSY_POLL
    assert rate(10_000, 5) == BUSY_POLL


# -- a lost database ---------------------------------------------------------


def _locked() -> Exception:
    """What a database gone away raises: SQLite's lock held too long, as peewee wraps it."""
    return peewee.OperationalError(sqlite3.OperationalError("database is locked"))


def test_after_a_failed_renewal_the_leases_are_renewed_before_anything_is_claimed(
    make_monitor, make_scheduler, settings, clock, target, monkeypatch
):
    m = make_monitor("slow", kind="held")
    holder = make_scheduler(worker_id="holder")
    holder.loop(clock.now())
    assert target.arrived["slow"].wait(10)
    renew, down = holder.dispatcher.renew, [True]

    def renew_unless_down(keys, now):
        if down[0]:
            raise _locked()
        return renew(keys, now)

    monkeypatch.setattr(holder.dispatcher, "renew", renew_unless_down)
    for _ in range(4):  # two leases without a renewal: the lease expires meanwhile
        clock.advance(settings.lease_seconds / 2)
        holder.loop(clock.now())
    row = MonitorLocation.get(MonitorLocation.monitor == m.id)
    assert row.lease_owner.startswith("holder/") and row.lease_expires_at < clock.now()
    assert target.hits["slow"] == 1  # its own expired lease was not claimed again

    down[0] = False
    clock.advance(holder.renew_every)  # past the backoff: the next loop renews first
    holder.loop(clock.now())
    row = MonitorLocation.get(MonitorLocation.monitor == m.id)
    assert row.lease_expires_at == clock.now() + timedelta(seconds=settings.lease_seconds)
    target.released["slow"].set()
    assert holder.settle(30)
    assert target.hits["slow"] == 1 and len(runs_of(m)) == 1 and holder.lost_results == 0


def test_claims_on_an_unavailable_database_wait_and_say_so_in_healthz(
    make_monitor, settings, clock, caplog
):
    from uptime_server.db.outages import OUTAGES

    make_monitor("due")
    OUTAGES.recovered()
    caplog.clear()
    # The engine's database worker cannot connect (nothing listens on port 1);
    # this process (the API's /healthz) still reaches the database.
    lost = settings.with_overrides(database_url="postgresql://nobody@127.0.0.1:1/none")
    worker = DatabaseWorker(lost)
    scheduler = CheckScheduler(lost, claims=worker, records=worker, clock=clock, sleep=no_sleep)
    try:
        delays = [scheduler.loop(clock.now()) for _ in range(3)]
        assert all(0 < delay <= 4 for delay in delays)
        assert delays == sorted(delays)  # backing off
        assert scheduler.dispatched == 0
        clock.advance(7)
        reason = "the engine's database worker cannot use the database (for 7 s)"
        assert scheduler.health() == reason
        app = create_app(settings, clock=clock, services=scheduler.services, bind_database=False)
        answer = app.test_client().get("/healthz")
        assert answer.status_code == 503
        assert answer.get_json() == {
            "status": "error",
            "database": "ok",
            "scheduler_lag_seconds": 7.0,
            "reason": reason,
        }
    finally:
        scheduler.close()
    outages = [r for r in caplog.records if "database unavailable" in r.getMessage()]
    assert len(outages) == 1 and outages[0].levelname == "WARNING"
    assert not [r for r in caplog.records if r.exc_info]  # no traceback per try
