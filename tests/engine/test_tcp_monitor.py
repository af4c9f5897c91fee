"""A tcp monitor through the whole engine: API, scheduler, probe, recorder, notification.

Time comes from the ManualClock; ``settle()`` waits for the real checks and the
writer, as in test_scheduler.
"""

from __future__ import annotations

import socket

from tests.engine.conftest import step
from uptime_server.models import CheckRun, Notification, Outbox


def test_a_tcp_monitor_goes_online_then_offline_when_the_port_closes(alice, clock, scheduler):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    body = {
        "name": "postgres",
        "type": "tcp",
        "url": f"tcp://127.0.0.1:{port}",
        "timeout": 5,
        "check_interval": 10,
    }
    response = alice.post("/api/v1/monitors", json=body)
    assert response.status_code == 201, response.json
    mid = response.json["data"]["id"]

    step(clock, scheduler, 10)
    shown = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (shown["status"], shown["last_error"], shown["status_code"]) == ("online", None, None)
    assert shown["response_time"] is not None

    listener.close()
    for _ in range(2):
        step(clock, scheduler, 10)
    shown = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (shown["status"], shown["last_error"]) == ("offline", "connection refused")
    statuses = [r.status for r in CheckRun.select().where(CheckRun.monitor == mid)]
    assert statuses[0] == "online" and set(statuses[1:]) == {"offline"}
    [incident] = Notification.select().where(Notification.monitor == mid)
    assert (incident.type, incident.status) == ("downtime", "active")
    assert incident.error_message == "connection refused"
    assert Outbox.select().where(Outbox.notification == incident.id).count() >= 1
