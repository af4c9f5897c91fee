"""Process level: a SIGKILLed engine's slow check is taken over within one lease.

Two real `uptime server run` processes share one database (SQLite, PostgreSQL)
with ``UPTIME_LEASE_SECONDS=2``. One of them claims a check whose target holds
the request; while it lives, it renews the lease and the other never runs the
check. Once it is SIGKILLed, the other checks the monitor again within the
lease plus one interval, and the killed run leaves nothing behind.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import wait_for
from tests.engine.targets import CountingServer
from uptime_server.db import connect_url

pytestmark = pytest.mark.slow

LEASE = 2  # seconds, UPTIME_LEASE_SECONDS
INTERVAL = 10  # seconds: the least a 10 s timeout allows; the held run must not time out


@pytest.fixture
def held() -> Iterator[CountingServer]:
    server = CountingServer()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'uptime.db'}"
    return request.getfixturevalue("fresh_pg_url")


def _slot(url: str, monitor_id: int) -> tuple[str | None, int]:
    """The check's lease owner and the number of runs recorded, read from the database."""
    db = connect_url(url)
    with db.connection_context():
        where = f"WHERE monitor_id = {db.param}"
        [(owner,)] = db.execute_sql(
            f"SELECT lease_owner FROM monitor_locations {where}", (monitor_id,)
        ).fetchall()
        [(runs,)] = db.execute_sql(
            f"SELECT COUNT(*) FROM check_runs {where}", (monitor_id,)
        ).fetchall()
    db.close()
    return owner, runs


def _pid_of(owner: str) -> int:
    # <host>-<pid>-<tag>/<batch> (dispatcher.new_worker_id)
    return int(owner.split("/")[0].rsplit("-", 2)[1])


def test_a_sigkilled_holder_s_check_is_taken_over_within_one_lease(
    database_url, make_cluster, held
):
    cluster = make_cluster(database_url)
    cluster.env["UPTIME_LEASE_SECONDS"] = str(LEASE)
    daemons = [cluster.daemon().start()]  # migrates first; then the second joins
    daemons.append(cluster.daemon().start())
    cluster.sign_in()
    mid = cluster.add_monitor(
        daemons[0], "slow", held.url("held", "slow"), check_interval=INTERVAL, timeout=10
    )
    assert held.arrived["slow"].wait(15), "no daemon started the check"
    owner, _ = _slot(database_url, mid)
    [holder] = [d for d in daemons if d.proc.pid == _pid_of(owner)]
    [other] = [d for d in daemons if d is not holder]

    time.sleep(2 * LEASE)  # two whole leases: the holder renews, the other waits
    assert held.hits["slow"] == 1
    assert _slot(database_url, mid)[0] == owner

    holder.kill()
    killed_at = time.monotonic()
    held.released["slow"].set()  # the next request is answered at once
    wait_for(lambda: held.hits["slow"] >= 2, LEASE + INTERVAL + 5, "the check taken over")
    takeover = held.arrivals["slow"][1] - killed_at
    print(f"takeover after SIGKILL: {takeover:.2f} s (lease {LEASE} s, interval {INTERVAL} s)")
    assert takeover <= LEASE + INTERVAL

    wait_for(lambda: _slot(database_url, mid)[1] >= 1, 15, "the survivor's run recorded")
    assert other.stop() == 0
    # Every request but the killed one left a run; the killed run left none.
    assert _slot(database_url, mid)[1] == held.hits["slow"] - 1
