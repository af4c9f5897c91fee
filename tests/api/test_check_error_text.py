"""A run's error as stored, returned and notified carries no control characters."""

from __future__ import annotations

import re
from typing import Any

from tests.api.shapes import create
from tests.engine.targets import CountingServer
from uptime_server.models import CheckRun, Monitor, Notification

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# Validation lets ESC through in expected_content (only NUL is refused), and
# the failed check quotes the content it looked for.
HOSTILE = "\x1b]0;owned\x07\x1b[2Jok\x9b1m\x7f\nbye"


def test_a_run_error_is_stored_and_shown_without_control_characters(
    alice: Any, target: CountingServer
) -> None:
    mid = create(alice, url=target.url("ok", "esc"), expected_content=HOSTILE)
    expected = 'expected content "]0;owned[2Jok1m bye" not found'

    tested = alice.post(f"/api/v1/monitors/{mid}/test").get_json()["data"]

    assert tested["error"] == expected
    [record] = alice.get(f"/api/v1/monitors/{mid}/history").get_json()["data"]
    assert record["error"] == expected
    assert CheckRun.get(CheckRun.monitor == mid).error == expected
    assert Monitor.get_by_id(mid).last_error == expected
    [downtime] = Notification.select().where(Notification.monitor == mid)
    assert not CONTROL.search(downtime.message) and expected in downtime.message
