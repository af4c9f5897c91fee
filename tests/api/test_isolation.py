"""Two users: neither sees nor touches the other's monitors, on any endpoint.

Another user's monitor is 404 MONITOR_NOT_FOUND, never 403, so ids leak
nothing. The per-monitor routes are read from the app's URL map, so routes
added later (test, stats, history, ...) are covered too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create
from uptime_server.models import AlertSettings, Monitor

URL = "/api/v1/monitors"
BODIES = {
    ("PUT", "/api/v1/monitors/<int:monitor_id>"): {"name": "taken over"},
    ("PUT", "/api/v1/monitors/<int:monitor_id>/alerts"): {"email_recipients": ["x@evil.test"]},
    ("POST", "/api/v1/monitors/<int:monitor_id>/pause"): {"reason": "mine now"},
}


def monitor_routes(app: Any) -> list[tuple[str, str]]:
    routes = []
    for rule in app.url_map.iter_rules():
        if "monitor_id" in rule.arguments:
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                routes.append((method, rule.rule))
    return routes


@pytest.fixture
def alices(alice: Any) -> dict[str, Any]:
    """One monitor of alice's and what it looks like before bob tries anything."""
    mid = create(alice, name="alice's")
    return {"id": mid, "before": alice.get(f"{URL}/{mid}").get_json()["data"]}


def test_it_covers_the_known_monitor_routes(app: Any) -> None:
    routes = set(monitor_routes(app))
    assert {
        ("GET", "/api/v1/monitors/<int:monitor_id>"),
        ("PUT", "/api/v1/monitors/<int:monitor_id>"),
        ("DELETE", "/api/v1/monitors/<int:monitor_id>"),
        ("POST", "/api/v1/monitors/<int:monitor_id>/pause"),
        ("POST", "/api/v1/monitors/<int:monitor_id>/resume"),
        ("GET", "/api/v1/monitors/<int:monitor_id>/alerts"),
        ("PUT", "/api/v1/monitors/<int:monitor_id>/alerts"),
    } <= routes


def test_it_hides_other_users_monitors_on_every_route(
    app: Any, alice: Any, bob: Any, alices: dict[str, Any]
) -> None:
    mid = alices["id"]
    for method, rule in monitor_routes(app):
        path = rule.replace("<int:monitor_id>", str(mid))
        response = bob.request(method, path, json=BODIES.get((method, rule), {}))
        error = assert_error(response, 404, "MONITOR_NOT_FOUND")
        assert error["message"] == "Monitor not found"
    assert alice.get(f"{URL}/{mid}").get_json()["data"] == alices["before"]
    assert AlertSettings.get_by_id(mid).email_recipients == []


def test_it_answers_the_same_for_missing_and_foreign_ids(bob: Any, alices: dict[str, Any]) -> None:
    foreign = bob.get(f"{URL}/{alices['id']}")
    missing = bob.get(f"{URL}/{alices['id'] + 1000}")
    assert (foreign.status_code, foreign.get_json()) == (missing.status_code, missing.get_json())


def test_it_lists_only_own_monitors(alice: Any, bob: Any, alices: dict[str, Any]) -> None:
    bobs = create(bob, name="bob's")
    listed = bob.get(f"{URL}?search=s").get_json()
    assert [m["id"] for m in listed["data"]] == [bobs]
    assert listed["pagination"]["total"] == 1
    assert [m["id"] for m in alice.get(URL).get_json()["data"]] == [alices["id"]]


@pytest.mark.parametrize("action", ["pause", "resume", "delete", "update"])
def test_it_fails_bulk_actions_on_other_users_monitors(
    bob: Any, alices: dict[str, Any], action: str
) -> None:
    mid = alices["id"]
    if action == "resume":
        Monitor.update(paused=True).where(Monitor.id == mid).execute()
    body: dict[str, Any] = {"action": action, "monitor_ids": [mid]}
    if action == "update":
        body["settings"] = {"name": "taken over"}
    result = bob.post(f"{URL}/bulk", json=body).get_json()["data"]
    assert result["succeeded"] == []
    assert result["failed"] == [
        {"id": mid, "error": {"code": "MONITOR_NOT_FOUND", "message": "Monitor not found"}}
    ]
    monitor = Monitor.get_by_id(mid)
    assert (monitor.name, monitor.paused) == ("alice's", action == "resume")
