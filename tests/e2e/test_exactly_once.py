"""Process level: a SIGKILLed daemon, and two daemons on one PostgreSQL database.

Real `uptime server run` processes check a local target through the API's
monitors, and mail a real aiosmtpd server. Every email must arrive exactly
once per transition, whatever happens to the processes.
"""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import wait_for

pytestmark = pytest.mark.slow

DOWN = "[Uptime] DOWN: {}"
UP = "[Uptime] UP: {}"
# One delivery poll is 1 s: a duplicate would show up within this.
SETTLE = 1.5


def _all_marked_sent(cluster, daemon) -> bool:
    notes = cluster.api(daemon, "GET", "/notifications").json()["data"]
    return bool(notes) and all(n["email_sent_at"] for n in notes)


def add_monitor(cluster, daemon, target, name):
    # A 5 s check interval is the least a 5 s timeout allows.
    return cluster.add_monitor(daemon, name, target.url, check_interval=5, timeout=5)


def test_sigkill_mid_outage_then_restart(make_cluster, mailbox, target):
    box, _ = mailbox
    cluster = make_cluster()
    first = cluster.daemon().start()
    cluster.sign_in()
    add_monitor(cluster, first, target, "e2e-api")
    wait_for(lambda: box.subjects() == [DOWN.format("e2e-api")], 10, "the DOWN email")
    # Killed after the send is on record: a crash between the mail server's
    # "accepted" and that write may send twice by design (delivery.py), and
    # a loaded machine widens that window beyond the mail's arrival.
    wait_for(lambda: _all_marked_sent(cluster, first), 10, "the DOWN email marked sent")

    first.kill()
    hits = target.hits
    second = cluster.daemon().start()
    wait_for(lambda: target.hits > hits, 12, "a failing check after the restart")
    time.sleep(SETTLE)
    assert box.subjects() == [DOWN.format("e2e-api")]  # still the one outage

    target.status = 200
    wait_for(lambda: len(box.handler.received) >= 2, 12, "the UP email")
    time.sleep(SETTLE)
    assert box.subjects() == [DOWN.format("e2e-api"), UP.format("e2e-api")]
    assert len(set(box.message_ids())) == 2
    r = cluster.api(second, "GET", "/notifications")
    assert [(n["type"], n["status"]) for n in r.json()["data"]] == [
        ("recovery", "resolved"),
        ("downtime", "resolved"),
    ]
    assert all(n["email_sent_at"] for n in r.json()["data"])
    assert second.stop() == 0


def test_two_daemons_on_one_postgresql_send_one_email_per_transition(
    make_cluster, mailbox, target, fresh_pg_url
):
    box, _ = mailbox
    cluster = make_cluster(fresh_pg_url)
    a = cluster.daemon().start()  # migrates first; then the second joins
    b = cluster.daemon().start()
    cluster.sign_in()
    names = [f"e2e-{i}" for i in range(3)]
    for name in names:
        add_monitor(cluster, a, target, name)
    downs = sorted(DOWN.format(n) for n in names)
    wait_for(lambda: sorted(box.subjects()) == downs, 12, "three DOWN emails")
    hits = target.hits
    wait_for(lambda: target.hits >= hits + 3, 12, "more failing checks")

    target.status = 200
    wait_for(lambda: len(box.handler.received) >= 6, 12, "three UP emails")
    time.sleep(SETTLE)
    assert sorted(box.subjects()) == sorted(downs + [UP.format(n) for n in names])
    assert len(set(box.message_ids())) == 6
    assert a.stop() == 0 and b.stop() == 0
