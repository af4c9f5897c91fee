"""401 UNAUTHORIZED on every API endpoint but the public ones, never a redirect.

Routes are read from the app's URL map, so endpoints added on other branches
are held to the same rule as soon as they are registered.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from uptime_server.wsgi.access import is_public

pytestmark = sqlite_only

# The only API paths reachable without a session: OAuth login and callback,
# the CLI ticket exchange (it carries its own proof) and the API document.
PUBLIC = {
    "/api/v1/auth/{provider}/login",
    "/api/v1/auth/{provider}/callback",
    "/api/v1/auth/cli/exchange",
    "/api/v1/openapi.json",
}


def api_routes(app: Any, *, public: bool) -> list[tuple[str, str, str]]:
    routes = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/"):
            continue
        if is_public(app.view_functions[rule.endpoint]) != public:
            continue
        path = re.sub(
            r"<(?:\w+:)?(\w+)>", lambda m: "github" if m[1] == "provider" else "1", rule.rule
        )
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            routes.append((method, path, rule.endpoint))
    return routes


def test_it_refuses_anonymous_calls_everywhere(app: Any, anon: Any) -> None:
    routes = api_routes(app, public=False)
    assert len(routes) >= 13
    for method, path, _ in routes:
        response = anon.open(path, method=method, json={})
        assert_error(response, 401, "UNAUTHORIZED")
        assert "Location" not in response.headers, path


@pytest.mark.parametrize(
    "token", ["not-a-session", "x" * 500, ""], ids=["unknown", "oversized", "empty"]
)
def test_it_refuses_unknown_tokens(app: Any, token: str) -> None:
    client = app.test_client()
    client.set_cookie("session_cookie", token)
    assert_error(client.get("/api/v1/monitors"), 401, "UNAUTHORIZED")
    assert_error(client.get("/api/v1/auth/user"), 401, "UNAUTHORIZED")


def test_it_keeps_public_only_what_must_be(app: Any) -> None:
    public = {
        re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/v1/") and is_public(app.view_functions[rule.endpoint])
    }
    assert "/api/v1/openapi.json" in public
    assert public <= PUBLIC


def test_it_serves_the_document_without_a_session(anon: Any) -> None:
    assert anon.get("/api/v1/openapi.json").status_code == 200


def test_it_serves_healthz_without_a_session(anon: Any) -> None:
    assert anon.get("/healthz").status_code == 200
