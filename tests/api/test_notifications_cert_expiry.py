"""cert_expiry notifications in the notifications resource (docs/api.md#notification-object)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, Notification

URL = "/api/v1/notifications"


@pytest.fixture
def monitor(make_monitor):
    return make_monitor("shop", type="https", url="https://127.0.0.1:9/")


@pytest.fixture
def check(settings, clock):
    """One run that saw a certificate expiring 5 days after the start (*later*: days later)."""
    recorder = Recorder(settings)
    expires = clock.now() + timedelta(days=5)

    def run(monitor, passed=True, later=0):
        clock.advance(later * 86400)
        result = outcome(monitor, clock, passed, cert_expires_at=expires, cert_serial="0C")
        recorder.record([result], now=clock.now())
        clock.advance(60)

    return run


def test_it_is_listed_filtered_and_isolated(alice, bob, monitor, check):
    check(monitor)
    r = alice.get(f"{URL}?type=cert_expiry")
    assert r.status_code == 200, r.json
    [note] = r.json["data"]
    assert (note["type"], note["status"], note["monitor_id"]) == ("cert_expiry", "active", 1)
    assert note["message"].startswith("Certificate for shop expires in 7 days (not after ")
    assert [n["id"] for n in alice.get(f"{URL}/active").json["data"]] == [note["id"]]
    assert alice.get(f"{URL}?type=downtime").json["data"] == []
    assert bob.get(f"{URL}?type=cert_expiry").json["data"] == []
    assert bob.get(f"{URL}/{note['id']}").status_code == 404
    assert bob.post(f"{URL}/{note['id']}/acknowledge").status_code == 404


def test_it_is_acknowledged_and_resolved_like_the_others(alice, monitor, check):
    check(monitor)
    note = Notification.get(Notification.type == "cert_expiry")
    r = alice.post(f"{URL}/{note.id}/acknowledge")
    assert r.status_code == 200 and r.json["data"]["acknowledged"] is True
    r = alice.post(f"{URL}/{note.id}/resolve")
    assert r.status_code == 200 and r.json["data"]["status"] == "resolved"
    assert Monitor.get_by_id(monitor.id).alerts_suppressed is False
    # Resolved by hand: the same threshold is not alerted again, the next one is.
    check(monitor, later=1)
    check(monitor, later=2)
    assert [n.message[:41] for n in Notification.select().order_by(Notification.id)] == [
        "Certificate for shop expires in 7 days (n",
        "Certificate for shop expires in 3 days (n",
    ]


def test_it_leaves_downtime_incidents_alone(alice, monitor, check):
    check(monitor)
    check(monitor, passed=False)
    check(monitor, passed=True)
    kinds = [(n.type, n.status) for n in Notification.select().order_by(Notification.id)]
    assert kinds == [
        ("cert_expiry", "active"),
        ("downtime", "resolved"),
        ("recovery", "resolved"),
    ]
