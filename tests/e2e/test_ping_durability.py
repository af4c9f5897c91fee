"""A daemon killed outright (SIGKILL) loses no ping it has answered.

Real `uptime server run`, real pings over HTTP from several threads, killed
while they are still arriving; the database is read afterwards.
"""

from __future__ import annotations

import sqlite3
import threading
from urllib.parse import urlsplit

import pytest
import requests

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.slow

SENDERS = 4


def test_every_answered_ping_survives_a_sigkill(make_cluster, tmp_path):
    cluster = make_cluster()
    cluster.env["UPTIME_PING_RATE_LIMIT"] = "off"
    daemon = cluster.daemon().start()
    cluster.sign_in()
    body = {"name": "e2e-pings", "type": "heartbeat", "period": 3600, "grace": 600}
    created = cluster.api(daemon, "POST", "/monitors", json=body)
    assert created.status_code == 201, created.text
    url = daemon.base + urlsplit(created.json()["data"]["ping_url"]).path + "/log"
    answered = [0] * SENDERS
    killed = threading.Event()

    def send(i: int) -> None:
        with requests.Session() as session:
            while not killed.is_set():
                try:
                    response = session.post(url, data=f"line {i}".encode(), timeout=10)
                except requests.RequestException:
                    return  # the daemon is gone
                if response.status_code == 200:
                    answered[i] += 1

    senders = [threading.Thread(target=send, args=(i,)) for i in range(SENDERS)]
    for t in senders:
        t.start()
    wait_for(lambda: sum(answered) >= 200, 60, "200 answered pings")
    daemon.kill()  # pings in flight: some queued, one commit under way
    killed.set()
    for t in senders:
        t.join(15)
    with sqlite3.connect(tmp_path / "uptime.db") as db:
        (stored,) = db.execute(
            "SELECT COUNT(*) FROM check_runs WHERE monitor_id = ?", (created.json()["data"]["id"],)
        ).fetchone()
    # Unanswered pings may or may not have been committed; every answered one was.
    assert stored >= sum(answered) >= 200
