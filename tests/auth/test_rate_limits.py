"""Login, callback and exchange are limited per client IP (docs/api.md#rate-limits)."""

from __future__ import annotations

import pytest

pytestmark = [
    pytest.mark.parametrize("backend", ["sqlite"], indirect=True),
    pytest.mark.parametrize("extra_env", [{"UPTIME_LOGIN_RATE_LIMIT": "3/minute"}]),
]


def _fourth_is_limited(call) -> None:
    statuses = [call().status_code for _ in range(3)]
    assert 429 not in statuses
    r = call()
    assert r.status_code == 429
    assert r.json["error"]["code"] == "RATE_LIMIT_EXCEEDED"
    assert int(r.headers["Retry-After"]) > 0


def test_login_is_limited(anon, providers):
    _fourth_is_limited(lambda: anon.get("/api/v1/auth/github/login"))


def test_callback_is_limited(anon, providers):
    _fourth_is_limited(lambda: anon.get("/api/v1/auth/github/callback?code=c&state=s"))


def test_exchange_is_limited(anon, providers):
    body = {"ticket": "t", "verifier": "v" * 43}
    _fourth_is_limited(lambda: anon.post("/api/v1/auth/cli/exchange", json=body))


def test_the_limit_is_per_ip(app, providers):
    one = app.test_client()
    for _ in range(3):
        one.get("/api/v1/auth/github/login", environ_base={"REMOTE_ADDR": "10.1.1.1"})
    limited = one.get("/api/v1/auth/github/login", environ_base={"REMOTE_ADDR": "10.1.1.1"})
    assert limited.status_code == 429
    other = app.test_client().get(
        "/api/v1/auth/github/login", environ_base={"REMOTE_ADDR": "10.2.2.2"}
    )
    assert other.status_code == 302
