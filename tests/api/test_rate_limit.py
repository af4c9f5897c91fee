"""Rate limiting: 429 RATE_LIMIT_EXCEEDED with Retry-After and X-RateLimit-* headers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only

pytestmark = sqlite_only
URL = "/api/v1/monitors"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_RATE_LIMIT": "5/minute"}


def test_it_limits_each_session(alice: Any, bob: Any) -> None:
    for remaining in (4, 3, 2, 1, 0):
        response = alice.get(URL)
        assert response.status_code == 200
        assert response.headers["X-RateLimit-Limit"] == "5"
        assert response.headers["X-RateLimit-Remaining"] == str(remaining)
    response = alice.get(URL)
    error = assert_error(response, 429, "RATE_LIMIT_EXCEEDED")
    assert error["details"] == {}
    retry_after = int(response.headers["Retry-After"])
    assert 0 < retry_after <= 60
    assert response.headers["X-RateLimit-Limit"] == "5"
    assert response.headers["X-RateLimit-Remaining"] == "0"
    assert int(response.headers["X-RateLimit-Reset"]) > 0
    # Writes count against the same budget and are refused before any change.
    assert_error(alice.post(URL, json={"name": "x"}), 429, "RATE_LIMIT_EXCEEDED")
    # Bob has a budget of his own.
    assert bob.get(URL).status_code == 200


def test_it_limits_anonymous_callers_by_address(anon: Any) -> None:
    statuses = [anon.get(URL).status_code for _ in range(6)]
    assert statuses == [401] * 5 + [429]


def test_it_counts_made_up_cookies_per_address(app: Any) -> None:
    statuses = []
    for i in range(6):
        client = app.test_client()
        client.set_cookie("session_cookie", f"made-up-{i}")
        statuses.append(client.get(URL).status_code)
    assert statuses == [401] * 5 + [429]


def test_it_does_not_limit_healthz(anon: Any) -> None:
    assert {anon.get("/healthz").status_code for _ in range(8)} == {200}


class TestOff:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_RATE_LIMIT": "off"}

    def test_it_can_be_turned_off(self, alice: Any) -> None:
        responses = [alice.get(URL) for _ in range(30)]
        assert {r.status_code for r in responses} == {200}
        assert "X-RateLimit-Limit" not in responses[-1].headers


# With the API's limit off, the endpoints left without a limit skip
# Flask-Limiter at once (app._init_limiter): login views must not be among them.
@pytest.mark.parametrize("api_limit", ["600/minute", None])
def test_it_limits_login_views_per_address(
    monkeypatch: pytest.MonkeyPatch, settings: Any, clock: Any, db: Any, api_limit: str | None
) -> None:
    # A stand-in for the sign-in blueprint: a public view marked login_limited.
    import types

    from flask import Blueprint

    from uptime_server import app as app_module
    from uptime_server.api import signin
    from uptime_server.app import create_app
    from uptime_server.wsgi.access import login_limited, public

    bp = Blueprint("signin", __name__, url_prefix="/auth")
    bp.add_url_rule("/<provider>/login", "login", public(login_limited(lambda provider: {})))
    stand_in = types.SimpleNamespace(bp=bp)
    blueprints = tuple(stand_in if m is signin else m for m in app_module.API_BLUEPRINTS)
    monkeypatch.setattr(app_module, "API_BLUEPRINTS", blueprints)
    limited = settings.with_overrides(login_rate_limit="3/minute", rate_limit=api_limit)
    client = create_app(limited, clock=clock, bind_database=False).test_client()
    statuses = [client.get("/api/v1/auth/github/login").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get("/api/v1/auth/github/login")
    assert_error(response, 429, "RATE_LIMIT_EXCEEDED")
    assert response.headers["X-RateLimit-Limit"] == "3"
    assert "Retry-After" in response.headers
