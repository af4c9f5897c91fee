"""The daemon's ping sink: queued pings are written in batches, and none is lost on close."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import sqlite_only
from tests.heartbeat.conftest import make_heartbeat, ping_path
from uptime_server.models import CheckRun
from uptime_server.ping_service import PingSink

pytestmark = sqlite_only


def test_close_writes_every_queued_ping(app: Any, alice: Any, settings: Any, clock: Any) -> None:
    sink = PingSink(settings, clock, in_process=True)
    sink.writer.max_wait = 30.0  # nothing would be written before close
    app.extensions["uptime"].services["ping_sink"] = sink
    monitors = [make_heartbeat(alice) for _ in range(3)]
    client = app.test_client()
    for m in monitors:
        assert client.get(ping_path(m)).status_code == 200
    sink.close()
    assert CheckRun.select().count() == 3


def test_a_full_queue_makes_the_ping_wait_until_written(
    app: Any, alice: Any, settings: Any, clock: Any
) -> None:
    sink = PingSink(settings, clock, in_process=True)
    sink.MAX_BACKLOG = 0
    sink.writer.max_wait = 30.0  # only the flush a full queue asks for writes it
    app.extensions["uptime"].services["ping_sink"] = sink
    m = make_heartbeat(alice)
    try:
        assert app.test_client().get(ping_path(m, "log")).status_code == 200
        assert CheckRun.select().count() == 1
    finally:
        sink.close()
