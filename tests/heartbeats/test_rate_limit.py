"""Pings are limited per token (UPTIME_PING_RATE_LIMIT), outside the per-address budget."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.heartbeats.conftest import make_heartbeat, ping_path
from uptime_server.models import CheckRun

pytestmark = sqlite_only


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_PING_RATE_LIMIT": "3/minute", "UPTIME_RATE_LIMIT": "5/minute"}


def test_each_token_has_its_own_budget(alice: Any, anon: Any) -> None:
    first, second = make_heartbeat(alice), make_heartbeat(alice)
    for _ in range(3):
        assert anon.get(ping_path(first, "log")).status_code == 200
    response = anon.get(ping_path(first))
    assert_error(response, 429, "RATE_LIMIT_EXCEEDED")
    assert response.headers["Retry-After"]
    assert CheckRun.select().count() == 3  # the refused ping wrote nothing
    # Another job's token, from the same address, past the 5/minute address budget.
    for _ in range(3):
        assert anon.get(ping_path(second)).status_code == 200
