"""UPTIME_TEST_RUN_TIMEOUT bounds one "test now" run, every attempt and retry included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.hanging_target import HangingTarget
from tests.api.shapes import assert_error
from uptime_server.models import CheckRun, Monitor


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_TEST_RUN_TIMEOUT": "1"}


@pytest.fixture
def target() -> Iterator[HangingTarget]:
    server = HangingTarget()
    yield server
    server.stop()


def test_a_run_over_the_deadline_fails_clearly_and_records_nothing(
    alice: Any, make_monitor: Any, target: HangingTarget
) -> None:
    # Up to 3 attempts of 60 s: without the deadline, the request would wait ~3 minutes.
    monitor = make_monitor("slow", url=target.url, timeout=60, retry_count=2)

    response = alice.post(f"/api/v1/monitors/{monitor.id}/test")

    error = assert_error(response, 504, "TEST_RUN_TIMEOUT")
    assert "within 1s" in error["message"] and "UPTIME_TEST_RUN_TIMEOUT" in error["message"]
    assert target.arrived == 1  # the first attempt, cut short: no retry followed
    assert CheckRun.select().where(CheckRun.monitor == monitor.id).count() == 0
    assert Monitor.get_by_id(monitor.id).status == "pending"
    # Each run gives its slot back: with two per user, a leak would refuse the third.
    for _ in range(2):
        assert_error(alice.post(f"/api/v1/monitors/{monitor.id}/test"), 504, "TEST_RUN_TIMEOUT")
