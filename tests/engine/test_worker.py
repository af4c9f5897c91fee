"""The database worker (``engine/worker.py``): its requests, its pipe, its outages, its imports."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.outcomes import outcome
from uptime_server.checks.outcomes import CheckOutcome, PingFacts
from uptime_server.db import database, is_sqlite
from uptime_server.db.outages import unavailable
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import ClaimRequest, Dispatcher
from uptime_server.engine.worker import DatabaseWorker, WorkerUnavailable
from uptime_server.heartbeats import batch as pings
from uptime_server.models import CheckRun, MonitorLocation

AT = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]


def request(dispatcher: Dispatcher, clock) -> ClaimRequest:  # type: ignore[no-untyped-def]
    """The dispatcher's next claim, named at the clock's now."""
    named = dispatcher.next_request(clock.now())
    assert named is not None
    return named


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
            counted=False,
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
    sent = pickle.dumps(outcomes, pickle.HIGHEST_PROTOCOL)
    assert pickle.loads(sent) == outcomes
    # By their values in field order, not a dict of field names per outcome.
    assert b"monitor_created_at" not in sent and b"exit_code" not in sent


def test_each_request_is_answered_by_its_own_method_in_the_child(db, settings, clock, make_monitor):  # type: ignore[no-untyped-def]
    up, down = make_monitor("up"), make_monitor("down")
    child = DatabaseWorker(settings)
    here = Dispatcher(settings, worker_id="w")
    try:
        claims = child.claim(request(here, clock))
        assert child.pid is not None
        by_monitor = {c.monitor_id: c for c in claims}
        assert sorted(by_monitor) == sorted([up.id, down.id])
        # Recorded quietly: nothing comes back but that the batch is committed.
        run = outcome(up, clock, True, lease_owner="w/1", next_check_at=clock.now())
        assert child.record([run], clock.now()) is None
        assert [r.status for r in CheckRun.select()] == ["online"]
        # The claim whose run failed on our side: given back, due at its next slot.
        assert child.push_forward([by_monitor[down.id]], clock.now()) is None
        row = MonitorLocation.get(MonitorLocation.monitor == down.id)
        assert row.lease_owner is None and row.next_check_at > clock.now()
        unknown = pings.PingIn("no-such-hash", "success", None, b"", None, None, AT)
        assert child.record_pings([unknown], AT) == [pings.UNKNOWN]
        failed = outcome(up, clock, False)  # an ad-hoc run: leaves the schedule alone
        [done] = child.record([failed], clock.now(), want_results=True)
        assert (done.monitor_id, done.run_status) == (up.id, "offline")
    finally:
        child.close()
    assert child.pid is None


# -- what the child imports --------------------------------------------------------

# The libraries of the API, the schemas and the prober: the worker's child never
# runs them, and importing them would cost it the memory it was made light for.
HEAVY = ("flask", "pydantic", "aiohttp", "cryptography")


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_the_worker_module_imports_none_of_the_heavy_libraries() -> None:
    imports = "import json, sys, uptime_server.engine.worker; print(json.dumps(list(sys.modules)))"
    shown = subprocess.run(
        [sys.executable, "-c", imports],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    modules = json.loads(shown.stdout)
    assert "uptime_server.engine.recorder" in modules
    assert _heavy(modules) == []


# A parent whose main module has imported every heavy library, as the ``uptime``
# CLI's has, starts a worker that imports with ``-X importtime`` (through the
# environment, which the spawned child inherits and this process, already
# running, ignores), sends it each kind of request, and closes it: the child's
# import lines on stderr are everything the child really loaded.
PARENT = """
import os
import pickle
import sys

import aiohttp, cryptography, flask, pydantic  # noqa: F401, E401

from uptime_server.engine.dispatcher import ClaimRequest
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.heartbeats.batch import PingIn
from uptime_server.engine.worker import DatabaseWorker
from uptime_server.models import CHECKED_TYPES

if __name__ == "__main__":
    settings, now = pickle.loads(open(sys.argv[1], "rb").read())
    os.environ["PYTHONPROFILEIMPORTTIME"] = "1"
    worker = DatabaseWorker(settings)
    request = ClaimRequest(settings.locations[0], CHECKED_TYPES, now, 10, "closure/1")
    claims = worker.claim(request)
    failed = [
        CheckOutcome(
            monitor_id=c.monitor_id,
            monitor_created_at=c.monitor_created_at,
            location=c.location,
            checked_at=now,
            passed=False,
            response_time=None,
            status_code=None,
            error="connection refused",
            next_check_at=now,
            lease_owner=c.lease_owner,
        )
        for c in claims
    ]
    done = worker.record(failed, now, want_results=True)
    unknown = PingIn("no-such-hash", "success", None, b"", None, None, now)
    answers = worker.record_pings([unknown], now)
    worker.push_forward(claims, now)
    worker.close()
    print(len(claims), [d.monitor_status for d in done], answers)
"""


def test_the_worker_child_imports_none_of_the_heavy_libraries(
    db, settings, clock, make_monitor, tmp_path
):  # type: ignore[no-untyped-def]
    make_monitor("down")
    script, given = tmp_path / "parent.py", tmp_path / "given.pickle"
    script.write_text(PARENT)
    given.write_bytes(pickle.dumps((settings, clock.now())))
    ran = subprocess.run(
        [sys.executable, str(script), str(given)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    # The child did the work: a claim, an offline run recorded, a ping answered.
    assert ran.stdout.split() == ["1", "['offline']", "['unknown']"]
    imported = [
        line.rpartition("|")[2].strip()
        for line in ran.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    assert "uptime_server.engine.worker" in imported  # these are the child's lines
    assert "uptime_server.engine.recorder" in imported
    assert _heavy(imported) == []


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
    child = DatabaseWorker(settings)
    here = Dispatcher(settings, worker_id="w")
    try:
        claims = child.claim(request(here, clock))
        assert [c.monitor_id for c in claims] == [first.id, second.id]
        child.record([outcome(first, clock, True)], clock.now())
        before = _reconnects()

        _terminate_other_backends()  # both of the worker's: its writer's and its claimer's

        # The batch that meets the dead connection is written on a new one, once.
        [done] = child.record([outcome(second, clock, False)], clock.now(), want_results=True)
        assert done.run_id is not None and done.run_status == "offline"
        clock.advance(settings.lease_seconds + 1)
        assert len(child.claim(request(here, clock))) == 2  # and so is the next claim
        assert _reconnects() - before == 2
        with database.connection_context():
            runs = [(r.monitor_id, r.status) for r in CheckRun.select().order_by(CheckRun.id)]
        assert runs == [(first.id, "online"), (second.id, "offline")]
    finally:
        child.close()


def test_without_a_database_the_worker_answers_unavailable(db, settings, clock, make_monitor):
    m = make_monitor("m")
    lost = settings.with_overrides(database_url="postgresql://nobody@127.0.0.1:1/none")
    child = DatabaseWorker(lost)
    try:
        with pytest.raises(WorkerUnavailable, match="Connection refused") as raised:
            child.record([outcome(m, clock, True)], clock.now())
        assert unavailable(raised.value)  # retried by the writer, logged once per outage
    finally:
        child.close(5)
