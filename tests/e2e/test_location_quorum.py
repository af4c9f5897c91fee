"""Process level: two `uptime server run --location` daemons on one database, quorum of 2.

The ``us`` daemon refuses private targets (``UPTIME_BLOCK_PRIVATE_TARGETS``), so
its checks of the loopback target always fail, while ``eu``'s follow the
target. One failing location is a warning without alert; with the target
down too, both fail: offline, and exactly one DOWN email however many rounds
it lasts; with the target back, one UP.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Cluster, DaemonProcess, wait_for

pytestmark = pytest.mark.slow

INTERVAL = 5  # seconds (the least a 5 s timeout allows): stale 7.5 s after a location's run


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'uptime.db'}"
    return request.getfixturevalue("fresh_pg_url")


def _monitor(cluster: Cluster, daemon: DaemonProcess, mid: int) -> dict[str, Any]:
    r = cluster.api(daemon, "GET", f"/monitors/{mid}")
    assert r.status_code == 200, r.text
    return r.json()["data"]


def _runs(cluster: Cluster, daemon: DaemonProcess, mid: int) -> list[dict[str, Any]]:
    r = cluster.api(daemon, "GET", f"/monitors/{mid}/history", params={"limit": 1000})
    return r.json()["data"]


def _downtimes(cluster: Cluster, daemon: DaemonProcess) -> list[dict[str, Any]]:
    r = cluster.api(daemon, "GET", "/notifications", params={"type": "downtime"})
    return r.json()["data"]


def test_two_locations_with_a_quorum_of_two(database_url, make_cluster, mailbox, target):
    box, _ = mailbox
    target.status = 200
    cluster = make_cluster(database_url)
    cluster.env["UPTIME_LOCATIONS"] = "eu,us"
    eu = cluster.daemon()
    eu.extra_args = ["--location", "eu"]
    eu.start()  # migrates first; then the second joins
    us = cluster.daemon()
    us.env["UPTIME_BLOCK_PRIVATE_TARGETS"] = "true"
    us.extra_args = ["--location", "us"]
    us.start()
    cluster.sign_in()
    mid = cluster.add_monitor(
        eu, "api", target.url, check_interval=INTERVAL, timeout=5, locations=["eu", "us"]
    )
    r = cluster.api(eu, "PUT", f"/monitors/{mid}/alerts", json={"min_failed_locations": 2})
    assert r.json()["data"]["effective_min_failed_locations"] == 2

    # One location failing: a warning, and nothing sent.
    wait_for(lambda: _monitor(cluster, eu, mid)["status"] == "warning", 30, "a warning")
    states = {s["location"]: s["status"] for s in _monitor(cluster, eu, mid)["locations_status"]}
    assert states == {"eu": "online", "us": "offline"}
    seen = len(_runs(cluster, eu, mid))
    wait_for(lambda: len(_runs(cluster, eu, mid)) >= seen + 2, 30, "one more round")
    assert _monitor(cluster, us, mid)["status"] == "warning"
    assert _downtimes(cluster, eu) == [] and box.subjects() == []

    # Both failing: offline, one DOWN however long it lasts.
    target.status = 503
    wait_for(lambda: box.subjects(), 30, "the DOWN email")
    assert _monitor(cluster, eu, mid)["status"] == "offline"
    seen = len(_runs(cluster, eu, mid))
    wait_for(lambda: len(_runs(cluster, eu, mid)) >= seen + 4, 40, "two more rounds")
    assert _monitor(cluster, eu, mid)["status"] == "offline"
    assert len(_downtimes(cluster, eu)) == 1
    assert box.subjects() == ["[Uptime] DOWN: api"]

    # eu passes again: one location failing, the downtime resolves.
    target.status = 200
    wait_for(lambda: len(box.subjects()) == 2, 30, "the UP email")
    assert box.subjects() == ["[Uptime] DOWN: api", "[Uptime] UP: api"]
    assert _monitor(cluster, eu, mid)["status"] == "warning"
    history = _runs(cluster, eu, mid)
    assert {h["location"] for h in history} == {"eu", "us"}
    assert {h["quorum_status"] for h in history} >= {"warning", "offline"}
