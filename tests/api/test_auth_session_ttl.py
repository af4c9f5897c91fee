"""UPTIME_SESSION_TTL sets the session lifetime."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_SESSION_TTL": "2h"}


def test_it_uses_the_configured_lifetime(alice: Any, clock: Any) -> None:
    clock.advance(hours=1)
    response = alice.post("/api/v1/auth/refresh")
    assert response.get_json()["expires_at"] == "2026-11-22T15:00:00Z"
    clock.advance(hours=2)
    assert_error(alice.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")
