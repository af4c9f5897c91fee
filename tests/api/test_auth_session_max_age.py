"""Sessions have an absolute lifetime: /auth/refresh slides the expiry, but
never past UPTIME_SESSION_MAX_AGE (90 days by default) after sign-in."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.conftest import START, ApiUser
from uptime_server.app import create_app
from uptime_server.models import Session


def iso(when: Any) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_refresh_cannot_keep_a_session_alive_past_90_days(alice: Any, clock: Any) -> None:
    cap = START + timedelta(days=90)
    for _ in range(7):  # refreshed every 10 days: day 70 still gets the full 14 days
        clock.advance(days=10)
        response = alice.post("/api/v1/auth/refresh")
        assert response.get_json() == {
            "message": "Session refreshed",
            "expires_at": iso(clock.now() + timedelta(days=14)),
        }
    clock.advance(days=10)  # day 80: 14 more days would be day 94
    response = alice.post("/api/v1/auth/refresh")
    assert response.status_code == 200
    assert response.get_json()["expires_at"] == iso(cap)
    assert "maximum age" in response.get_json()["message"]
    assert Session.get(Session.user == alice.user.id).expires_at == cap
    clock.set(cap - timedelta(seconds=1))
    assert alice.post("/api/v1/auth/refresh").get_json()["expires_at"] == iso(cap)
    assert alice.get("/api/v1/monitors").status_code == 200
    clock.set(cap)
    assert_error(alice.post("/api/v1/auth/refresh"), 401, "UNAUTHORIZED")
    assert_error(alice.get("/api/v1/monitors"), 401, "UNAUTHORIZED")


class TestConfigured:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_SESSION_MAX_AGE": "2d"}

    def test_a_new_session_lasts_no_longer_than_the_maximum_age(
        self, alice: Any, clock: Any
    ) -> None:
        assert Session.get(Session.user == alice.user.id).expires_at == START + timedelta(days=2)
        clock.advance(days=1)
        expires = alice.post("/api/v1/auth/refresh").get_json()["expires_at"]
        assert expires == iso(START + timedelta(days=2))
        clock.advance(days=1)
        assert_error(alice.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")


def test_a_shorter_maximum_age_ends_sessions_refreshed_before_it(
    alice: Any, settings: Any, clock: Any
) -> None:
    for _ in range(2):
        clock.advance(days=10)
        assert alice.post("/api/v1/auth/refresh").status_code == 200  # on day 20: until day 34
    stricter = create_app(
        settings.with_overrides(session_max_age=10 * 86400), clock=clock, bind_database=False
    )
    same_cookie = ApiUser(stricter.test_client(), alice.token, alice.user)
    assert_error(same_cookie.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")
    assert alice.get("/api/v1/auth/user").status_code == 200  # under the 90 days
