"""Process level: a webhook channel's message, exactly once across a SIGKILL mid-send.

A real daemon delivers to a webhook receiver on 127.0.0.1 that fails
several times before it accepts; the daemon is SIGKILLed while its request
is in the receiver's hands, and a new daemon takes over once the dead one's
lease expires. Waiting out the 30 s, 60 s ... backoff is replaced by moving
the row's due time to now from the test (time passing, not a shortcut in
the daemon's code).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.e2e.conftest import wait_for
from tests.e2e.test_delivery_process import record_check
from tests.notify.receivers import Receiver, serve
from uptime_server import db
from uptime_server.config import load_settings
from uptime_server.models import Outbox

pytestmark = pytest.mark.slow

SECRET = "e2e-signing-secret-0123"


def _outbox(env: dict[str, str]) -> list[Outbox]:
    database = db.bind(load_settings(env).database_url)
    try:
        with database.connection_context():
            return list(Outbox.select().where(Outbox.channel_id.is_null(False)))
    finally:
        database.close()


def _due_now(env: dict[str, str]) -> None:
    """Time passes: the pending retry (and an expired lease) become due."""
    database = db.bind(load_settings(env).database_url)
    past = datetime.now(UTC) - timedelta(seconds=1)
    try:
        with database.connection_context():
            Outbox.update(next_attempt_at=past).where(Outbox.status == "pending").execute()
    finally:
        database.close()


def test_a_webhook_message_arrives_once_across_a_sigkill_mid_send(make_cluster, target):
    cluster = make_cluster()
    first = cluster.daemon().start()
    cluster.sign_in()
    monitor_id = cluster.add_monitor(first, "chan-api", target.url)
    with serve(Receiver(secret=SECRET, fail_first=3, hold_next=True)) as hook:
        body = {"name": "hook", "type": "webhook", "config": {"url": hook.url, "secret": SECRET}}
        channel = cluster.api(first, "POST", "/channels", json=body).json()["data"]
        alerts = {"channel_ids": [channel["id"]], "email_enabled": False}
        assert cluster.api(first, "PUT", f"/monitors/{monitor_id}/alerts", json=alerts).ok

        record_check(cluster.env, monitor_id)  # 503: the downtime opens
        assert hook.holding.wait(10), "the daemon never sent the webhook"
        first.kill()  # while its request is in the receiver's hands
        hook.release.set()

        second = cluster.daemon().start()
        for failures in (2, 3):  # the lease expires, then each 503 is retried
            wait_for(lambda n=failures: len(hook.requests) >= n, 15, f"attempt {failures}")
            wait_for(lambda: _outbox(cluster.env)[0].lease_owner is None, 10, "the 503 recorded")
            _due_now(cluster.env)
        wait_for(lambda: hook.accepted, 15, "the accepted delivery")
        wait_for(lambda: _outbox(cluster.env)[0].status == "sent", 10, "the send recorded")
        time.sleep(1.5)  # one more delivery poll: nothing is sent again

    [row] = _outbox(cluster.env)
    # The killed attempt left no record; the three after it did.
    assert (row.status, row.attempts) == ("sent", 3)
    assert len(hook.requests) == 4 and len(hook.accepted) == 1
    assert hook.bad_signatures == [] and hook.duplicates == []
    assert {r.headers["Idempotency-Key"] for r in hook.requests} == {row.message_id}
    note = cluster.api(second, "GET", f"/notifications/{row.notification_id}").json()["data"]
    [delivery] = note["deliveries"]
    assert (delivery["channel_name"], delivery["status"], delivery["attempts"]) == (
        "hook",
        "sent",
        3,
    )
    assert second.stop() == 0
