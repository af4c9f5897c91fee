"""The CSRF Origin rule for cookie-authenticated unsafe requests (docs/api.md#csrf)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only
from uptime_server.models import Monitor

pytestmark = sqlite_only
URL = "/api/v1/monitors"
BASE = "http://127.0.0.1:8080"  # UPTIME_BASE_URL of the test settings


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:8081"},
        {"Origin": "https://127.0.0.1:8080"},
        {"Origin": "null"},
        {"Origin": "http://["},
        {"Origin": "http://127.0.0.1:99999"},
        {"Referer": "http://evil.example/page"},
        {"Referer": "http://[/page"},
        {"Origin": "http://evil.example", "Referer": f"{BASE}/monitors"},
    ],
    ids=[
        "foreign",
        "other-port",
        "other-scheme",
        "null",
        "malformed",
        "bad-port",
        "referer",
        "malformed-referer",
        "origin-wins",
    ],
)
def test_it_refuses_foreign_origins(alice: Any, headers: dict[str, str]) -> None:
    response = alice.post(URL, json=monitor_body(), headers=headers)
    assert_error(response, 403, "INSUFFICIENT_PERMISSIONS")
    assert Monitor.select().count() == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": BASE},
        {"Referer": f"{BASE}/monitors?page=2"},
        {},
    ],
    ids=["same-origin", "same-origin-referer", "no-headers"],
)
def test_it_accepts_same_origin_and_header_less_requests(
    alice: Any, headers: dict[str, str]
) -> None:
    assert alice.post(URL, json=monitor_body(), headers=headers).status_code == 201


def test_it_guards_put_delete_and_session_endpoints(alice: Any) -> None:
    mid = create(alice)
    evil = {"Origin": "http://evil.example"}
    calls = [
        ("PUT", f"{URL}/{mid}", {"name": "x"}),
        ("DELETE", f"{URL}/{mid}", None),
        ("POST", f"{URL}/{mid}/pause", {}),
        ("PUT", f"{URL}/{mid}/alerts", {"alert_threshold": 5}),
        ("POST", f"{URL}/bulk", {"action": "delete", "monitor_ids": [mid]}),
        ("POST", "/api/v1/auth/refresh", None),
        ("POST", "/api/v1/auth/logout", None),
    ]
    for method, path, body in calls:
        response = alice.request(method, path, json=body, headers=evil)
        assert_error(response, 403, "INSUFFICIENT_PERMISSIONS")
    monitor = Monitor.get_by_id(mid)
    assert (monitor.name, monitor.paused) == ("api", False)
    assert alice.get("/api/v1/auth/user").status_code == 200


def test_it_leaves_safe_methods_alone(alice: Any) -> None:
    mid = create(alice)
    evil = {"Origin": "http://evil.example", "Referer": "http://evil.example/"}
    assert alice.get(URL, headers=evil).status_code == 200
    assert alice.get(f"{URL}/{mid}", headers=evil).status_code == 200


def test_it_answers_401_not_403_without_a_cookie(anon: Any) -> None:
    response = anon.post(URL, json=monitor_body(), headers={"Origin": "http://evil.example"})
    assert_error(response, 401, "UNAUTHORIZED")


class TestDefaultPorts:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_BASE_URL": "https://Uptime.Example.com/"}

    def test_it_compares_normalised_origins(self, alice: Any) -> None:
        for origin in ("https://uptime.example.com", "https://uptime.example.com:443"):
            response = alice.post(URL, json=monitor_body(), headers={"Origin": origin})
            assert response.status_code == 201, origin
        response = alice.post(
            URL, json=monitor_body(), headers={"Origin": "http://uptime.example.com"}
        )
        assert_error(response, 403, "INSUFFICIENT_PERMISSIONS")
