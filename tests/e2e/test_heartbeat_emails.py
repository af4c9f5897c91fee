"""A heartbeat outage across a daemon restart: exactly one DOWN and one UP email.

Real `uptime server run` processes, real pings over HTTP, a real aiosmtpd.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest
import requests

from tests.e2e.conftest import wait_for
from tests.e2e.test_exactly_once import DOWN, SETTLE, UP, _all_marked_sent

pytestmark = pytest.mark.slow


def test_one_down_and_one_up_email_across_a_restart(make_cluster, mailbox):
    box, _ = mailbox
    cluster = make_cluster()
    first = cluster.daemon().start()
    cluster.sign_in()
    body = {"name": "e2e-backup", "type": "heartbeat", "period": 3, "grace": 3}
    created = cluster.api(first, "POST", "/monitors", json=body)
    assert created.status_code == 201, created.text
    path = urlsplit(created.json()["data"]["ping_url"]).path
    assert requests.get(first.base + path, timeout=10).text.strip() == "OK"

    wait_for(lambda: box.subjects() == [DOWN.format("e2e-backup")], 30, "the DOWN email")
    wait_for(lambda: _all_marked_sent(cluster, first), 10, "the DOWN email marked sent")
    first.kill()

    second = cluster.daemon().start()
    # More missed slots are judged by the new daemon: still the one outage.
    time.sleep(6 + SETTLE)
    assert box.subjects() == [DOWN.format("e2e-backup")]

    assert requests.post(second.base + path, data=b"done", timeout=10).status_code == 200
    wait_for(lambda: len(box.handler.received) >= 2, 12, "the UP email")
    time.sleep(SETTLE)
    assert box.subjects() == [DOWN.format("e2e-backup"), UP.format("e2e-backup")]
    assert len(set(box.message_ids())) == 2
