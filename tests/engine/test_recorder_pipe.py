"""What crosses the recorder process's pipe: outcomes as tuples, the same outcomes out."""

from __future__ import annotations

import pickle
import time
from datetime import UTC, datetime

import pytest

from tests.outcomes import outcome
from uptime_server.db import database, is_sqlite
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import Dispatcher
from uptime_server.engine.outcomes import CheckOutcome, PingFacts
from uptime_server.engine.recorder_process import RecorderProcess, pack, unpack
from uptime_server.models import CheckRun

AT = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


def test_outcomes_cross_the_pipe_unchanged() -> None:
    outcomes = [
        CheckOutcome(
            monitor_id=7,
            monitor_created_at=AT,
            location="local",
            checked_at=AT,
            passed=False,
            response_time=1200,
            status_code=None,
            error="exit code 3: disk full",
            next_check_at=AT,
            ping=PingFacts(kind="exit", exit_code=3, message="disk full", source_ip="::1"),
        ),
        CheckOutcome(
            monitor_id=8,
            monitor_created_at=AT,
            location="eu",
            checked_at=AT,
            passed=True,
            response_time=35,
            status_code=200,
            error=None,
            attempts=2,
            retried=True,
            cert_expires_at=AT,
            cert_serial="0a",
            lease_owner="engine-1",
            expect_version=4,
        ),
    ]
    packed = pack(outcomes)
    assert all(type(row) is tuple for row in packed)
    assert unpack(pickle.loads(pickle.dumps(packed))) == outcomes


# -- the database worker and a dropped connection -------------------------------


def _terminate_other_backends() -> None:
    """``pg_terminate_backend`` every other connection to the test database, and wait
    until they are gone: what a PostgreSQL restart or failover does to them."""
    kill = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    left = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    with database.connection_context():
        database.execute_sql(kill)
        deadline = time.monotonic() + 10
        while database.execute_sql(left).fetchone()[0]:
            assert time.monotonic() < deadline, "the backends did not end"
            time.sleep(0.05)


def _reconnects() -> float:
    return counters.REGISTRY.get_sample_value("uptime_engine_db_reconnects_total") or 0.0


def test_the_worker_opens_new_connections_when_the_database_dropped_its_own(
    db, settings, clock, make_monitor
):
    if is_sqlite():
        pytest.skip("a PostgreSQL backend is what gets terminated")
    first, second = make_monitor("first"), make_monitor("second")
    child = RecorderProcess(settings)
    try:
        here = Dispatcher(settings, worker_id="w", claim_elsewhere=child.claim)
        assert [c.monitor_id for c in here.claim(clock.now())] == [first.id, second.id]
        child.record([outcome(first, clock, True)], now=clock.now())
        before = _reconnects()

        _terminate_other_backends()  # both of the worker's: its writer's and its claimer's

        # The batch that meets the dead connection is written on a new one, once.
        [done] = child.record([outcome(second, clock, False)], now=clock.now())
        assert done.run_id is not None and done.run_status == "offline"
        clock.advance(settings.lease_seconds + 1)
        assert len(here.claim(clock.now())) == 2  # and so is the next claim
        assert _reconnects() - before == 2
        with database.connection_context():
            runs = [(r.monitor_id, r.status) for r in CheckRun.select().order_by(CheckRun.id)]
        assert runs == [(first.id, "online"), (second.id, "offline")]
    finally:
        child.close()


def test_without_a_database_the_worker_answers_unavailable(db, settings, clock, make_monitor):
    from uptime_server.db_outages import unavailable
    from uptime_server.engine.recorder_process import WorkerUnavailable

    m = make_monitor("m")
    lost = settings.with_overrides(database_url="postgresql://nobody@127.0.0.1:1/none")
    child = RecorderProcess(lost)
    try:
        with pytest.raises(WorkerUnavailable, match="Connection refused") as raised:
            child.record([outcome(m, clock, True)], now=clock.now())
        assert unavailable(raised.value)  # retried by the writer, logged once per outage
    finally:
        child.close(5)
