"""Process level: PostgreSQL restarts under a running daemon.

A real ``uptime server run`` checks a loopback target on a private PostgreSQL
cluster of its own (``tests.pg_cluster``: initdb into a temporary directory,
a free loopback port), which the test stops and starts again, as a minor
upgrade, a failover or a restart for a setting would. The daemon must say it
cannot work while the database is gone, work again within seconds of its
return, lose nothing it had written and write nothing twice, and stop on
SIGTERM within its grace even with the database gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import requests

from tests.e2e.conftest import wait_for
from tests.notify.world import Target
from tests.pg_cluster import PrivateCluster, private_cluster

pytestmark = pytest.mark.slow

MONITORS = 10
INTERVAL = 5  # seconds: the least a 5 s timeout allows; 2 checks a second in all
RESUME_WITHIN = 10.0  # seconds after PostgreSQL is back
GRACE = 2  # UPTIME_SHUTDOWN_GRACE of the e2e daemons (tests/e2e/conftest.py)


@pytest.fixture
def private_pg() -> Iterator[PrivateCluster]:
    if PrivateCluster.binaries() is None:
        if os.environ.get("CI") or os.environ.get("UPTIME_REQUIRE_PG"):
            pytest.fail("PostgreSQL's initdb and pg_ctl are required here but not installed")
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
    with private_cluster() as cluster:  # removed when the test ends, failed or not
        yield cluster


@pytest.fixture
def healthy_target() -> Iterator[Target]:
    target = Target(status=200).start()
    yield target
    target.stop()


def history(cluster: PrivateCluster) -> list[tuple[Any, ...]]:
    """Every check run in the database: (id, monitor, location, checked_at)."""
    conn = psycopg.connect(cluster.url, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id, monitor_id, location, checked_at FROM check_runs ORDER BY id")
            return cur.fetchall()
    finally:
        conn.close()


def health(base: str) -> tuple[int, dict[str, Any]] | None:
    try:
        answer = requests.get(f"{base}/healthz", timeout=2)
    except requests.RequestException:
        return None
    return answer.status_code, answer.json()


def stop_within_grace(proc: subprocess.Popen[bytes]) -> float:
    """SIGTERM the daemon; how long it took to exit 0 (killed if it never does)."""
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=GRACE + 15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"SIGTERM did not stop the daemon in {GRACE + 15}s") from None
    assert code == 0
    return time.monotonic() - started


def test_a_postgresql_restart_under_load_loses_nothing_and_checks_resume(
    make_cluster, private_pg, healthy_target
):
    cluster = make_cluster(private_pg.url)
    daemon = cluster.daemon().start()
    cluster.sign_in()
    for i in range(MONITORS):
        cluster.add_monitor(
            daemon, f"restart-{i}", healthy_target.url, check_interval=INTERVAL, timeout=5
        )
    wait_for(lambda: len(history(private_pg)) >= 2 * MONITORS, 30, "two rounds of checks")

    before = history(private_pg)
    private_pg.stop("fast")
    down_at = time.monotonic()
    # /healthz says so while the database is gone (a healthy answer is reused for 1 s).
    seen = wait_for(
        lambda: (h := health(daemon.base)) is not None and h[0] == 503 and h, 10, "a 503"
    )
    assert seen[1]["status"] == "error" and seen[1]["reason"]
    while time.monotonic() - down_at < 3:  # a few seconds down, checks running meanwhile
        answer = health(daemon.base)
        assert answer is not None and answer[0] == 503, answer
        time.sleep(0.2)

    private_pg.start()
    back_at = time.monotonic()
    known = {row[0] for row in before}
    last = max(known)

    def new_rows() -> list[tuple[Any, ...]]:
        try:
            return [row for row in history(private_pg) if row[0] > last]
        except psycopg.OperationalError:  # still starting
            return []

    wait_for(new_rows, RESUME_WITHIN, "a check written after PostgreSQL came back")
    resumed = time.monotonic() - back_at
    assert resumed <= RESUME_WITHIN
    wait_for(lambda: (h := health(daemon.base)) is not None and h[0] == 200, 10, "healthy again")
    wait_for(lambda: len(new_rows()) >= MONITORS, 15, "every monitor checked again")

    after = history(private_pg)
    assert set(before) <= set(after), "a result written before the restart is gone"
    runs = [(monitor, location, checked_at) for _, monitor, location, checked_at in after]
    assert len(runs) == len(set(runs)), "a check run was written twice"

    # The database goes away again, for good this time: SIGTERM still stops the
    # daemon within its grace (checks in flight, a writer retrying, a worker
    # with no database), and exits 0.
    private_pg.stop("fast")
    wait_for(lambda: (h := health(daemon.base)) is not None and h[0] == 503, 10, "a 503")
    time.sleep(1)  # the writer and the scheduler meet the outage
    assert daemon.proc is not None
    took = stop_within_grace(daemon.proc)
    assert took < GRACE + 3, f"SIGTERM took {took:.1f}s with a grace of {GRACE}s"

    log = daemon.log_path.read_text(errors="replace")
    outages = [line for line in log.splitlines() if "database unavailable (" in line]
    assert len(outages) == 2, "\n".join(outages)  # one line per outage, not one per retry
    assert "connection already closed" not in log
