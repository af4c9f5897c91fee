"""Process level, delivery only: the daemon's delivery loop across SIGKILL.

Check runs are recorded from the test process into the daemon's SQLite
database (the scheduler is not needed for this); the daemon process must
deliver each email once, also across a SIGKILL and a restart.
"""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import wait_for
from tests.notify.world import probe
from uptime_server import db
from uptime_server.clock import Clock
from uptime_server.config import load_settings
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor

pytestmark = pytest.mark.slow


def record_check(env, monitor_id):
    settings = load_settings(env)
    database = db.bind(settings.database_url)
    try:
        with database.connection_context():
            probe(Recorder(settings), Monitor.get_by_id(monitor_id), Clock())
    finally:
        database.close()


def test_the_daemon_delivers_each_email_once_across_a_sigkill(make_cluster, mailbox, target):
    box, _ = mailbox
    cluster = make_cluster()
    first = cluster.daemon().start()
    cluster.sign_in()
    monitor_id = cluster.add_monitor(first, "proc-api", target.url)

    record_check(cluster.env, monitor_id)  # 503: the downtime opens
    wait_for(lambda: box.subjects() == ["[Uptime] DOWN: proc-api"], 10, "the DOWN email")
    [note] = cluster.api(first, "GET", "/notifications/active").json()["data"]
    assert note["email_sent_at"] is not None

    first.kill()
    target.status = 200
    record_check(cluster.env, monitor_id)  # recovers while no daemon runs
    second = cluster.daemon().start()
    wait_for(lambda: len(box.handler.received) >= 2, 10, "the UP email")
    time.sleep(1.5)  # one more delivery poll: nothing is sent again
    assert box.subjects() == ["[Uptime] DOWN: proc-api", "[Uptime] UP: proc-api"]
    assert len(set(box.message_ids())) == 2
    assert second.stop() == 0


def test_no_scheduler_means_no_delivery(make_cluster, mailbox, target):
    box, _ = mailbox
    cluster = make_cluster()
    api_only = cluster.daemon()
    api_only.extra_args = ["--no-scheduler"]
    api_only.start()
    cluster.sign_in()
    record_check(cluster.env, cluster.add_monitor(api_only, "quiet", target.url))
    time.sleep(1.5)
    assert box.handler.received == []
    assert cluster.api(api_only, "GET", "/notifications/active").json()["meta"]["count"] == 1
    assert api_only.stop() == 0
