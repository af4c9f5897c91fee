"""Without UPTIME_BASE_URL, the URLs the API hands out name the address it listens on."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in settings_env.items() if k != "UPTIME_BASE_URL"}
    return {**env, "UPTIME_PORT": "8931"}


def test_ping_and_status_page_urls_use_uptime_port(alice: Any) -> None:
    body = {"name": "backup", "type": "heartbeat", "period": 3600}
    created = alice.post("/api/v1/monitors", json=body).get_json()["data"]
    assert created["ping_url"].startswith("http://127.0.0.1:8931/ping/")
    shown = alice.get(f"/api/v1/monitors/{created['id']}").get_json()["data"]
    assert shown["ping_url"] == created["ping_url"]
    page = {"slug": "acme", "title": "Acme"}
    made = alice.post("/api/v1/status-pages", json=page).get_json()["data"]
    assert made["url"] == "http://127.0.0.1:8931/status/acme"
