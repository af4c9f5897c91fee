"""Every response says ``X-Content-Type-Options: nosniff``: successes, errors of
every kind, redirects, /healthz and /metrics. (Waitress's own refusals are
covered in tests/wsgi/test_http_server.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import create, sqlite_only
from uptime_server.app import create_app
from uptime_server.config import OAuthProvider

pytestmark = sqlite_only  # about response headers, not the database
MIB = 1024 * 1024


def assert_nosniff(response: Any) -> None:
    assert response.headers.getlist("X-Content-Type-Options") == ["nosniff"], (
        response.status_code,
        dict(response.headers),
    )


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/healthz", 200),
        ("GET", "/metrics", 200),
        ("GET", "/", 200),
        ("GET", "/api/v1/openapi.json", 200),
        ("GET", "/api/v1/monitors", 401),
        ("GET", "/nope", 404),
        ("POST", "/healthz", 405),
        ("GET", "/api/v1/auth/nope/login", 404),
    ],
)
def test_anonymous_responses_carry_it(anon: Any, method: str, path: str, status: int) -> None:
    response = anon.open(path, method=method)
    assert response.status_code == status
    assert_nosniff(response)


def test_signed_in_responses_carry_it(alice: Any) -> None:
    mid = create(alice)
    for response, status in (
        (alice.get("/api/v1/monitors"), 200),
        (alice.get(f"/api/v1/monitors/{mid}"), 200),
        (alice.get("/api/v1/monitors/999999"), 404),
        (alice.post("/api/v1/monitors", json={"name": ""}), 400),
        (alice.post("/api/v1/monitors", data=b"{bad", content_type="application/json"), 400),
        (alice.post("/api/v1/monitors", data=b"x" * (MIB + 1), content_type="text/plain"), 413),
        (alice.post(f"/api/v1/monitors/{mid}/resume"), 409),
        (alice.post("/api/v1/auth/refresh"), 200),
    ):
        assert response.status_code == status, response.get_data(as_text=True)
        assert_nosniff(response)


def test_internal_errors_carry_it(app: Any) -> None:
    def explode() -> Any:
        raise RuntimeError("boom")

    app.add_url_rule("/boom", "boom", explode)
    response = app.test_client().get("/boom")
    assert response.status_code == 500
    assert_nosniff(response)


def test_rate_limit_refusals_carry_it(settings: Any, clock: Any, db: Any) -> None:
    limited = settings.with_overrides(rate_limit="1/minute")
    client = create_app(limited, clock=clock, bind_database=False).test_client()
    first, second = client.get("/api/v1/monitors"), client.get("/api/v1/monitors")
    assert (first.status_code, second.status_code) == (401, 429)
    assert_nosniff(second)


def test_sign_in_redirects_carry_it(settings: Any, clock: Any, db: Any) -> None:
    # Built-in GitHub endpoints: the login only redirects, nothing is dialled.
    github = OAuthProvider(name="github", client_id="id", client_secret="secret")
    with_github = settings.with_overrides(oauth_providers={"github": github})
    client = create_app(with_github, clock=clock, bind_database=False).test_client()
    response = client.get("/api/v1/auth/github/login")
    assert response.status_code == 302
    assert_nosniff(response)
