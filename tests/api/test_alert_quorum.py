"""min_failed_locations in GET/PUT /api/v1/monitors/{id}/alerts and in apply/export."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create
from uptime_server.models import AlertSettings

URL = "/api/v1/monitors"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_LOCATIONS": "eu,us,ap,sa"}


def _alerts(user: Any, mid: int) -> dict[str, Any]:
    response = user.get(f"{URL}/{mid}/alerts")
    assert response.status_code == 200
    return response.get_json()["data"]


def _quorum(data: dict[str, Any]) -> tuple[Any, Any]:
    return data["min_failed_locations"], data["effective_min_failed_locations"]


@pytest.mark.parametrize(("locations", "majority"), [(1, 1), (2, 2), (3, 2), (4, 3)])
def test_the_default_is_a_majority_of_the_locations(
    alice: Any, locations: int, majority: int
) -> None:
    mid = create(alice, locations=["eu", "us", "ap", "sa"][:locations])
    assert _quorum(_alerts(alice, mid)) == (None, majority)


def test_it_sets_and_resets_the_quorum(alice: Any) -> None:
    mid = create(alice, locations=["eu", "us", "ap"])
    response = alice.put(f"{URL}/{mid}/alerts", json={"min_failed_locations": 3})
    assert response.status_code == 200
    assert _quorum(response.get_json()["data"]) == (3, 3)
    assert AlertSettings.get_by_id(mid).min_failed_locations == 3
    # Other changes keep it.
    alice.put(f"{URL}/{mid}/alerts", json={"alert_threshold": 2})
    assert _quorum(_alerts(alice, mid)) == (3, 3)
    response = alice.put(f"{URL}/{mid}/alerts", json={"min_failed_locations": None})
    assert _quorum(response.get_json()["data"]) == (None, 2)


@pytest.mark.parametrize("value", [0, -1, 3, 11, "2", 1.5, True])
def test_it_refuses_a_quorum_out_of_range(alice: Any, value: Any) -> None:
    mid = create(alice, locations=["eu", "us"])
    response = alice.put(f"{URL}/{mid}/alerts", json={"min_failed_locations": value})
    assert_error(response, 400, "VALIDATION_ERROR", "min_failed_locations", only=True)
    assert _quorum(_alerts(alice, mid)) == (None, 2)


def test_above_the_locations_the_message_says_how_many(alice: Any) -> None:
    mid = create(alice, locations=["eu", "us"])
    response = alice.put(f"{URL}/{mid}/alerts", json={"min_failed_locations": 3})
    error = assert_error(response, 400, "VALIDATION_ERROR", "min_failed_locations")
    assert error["details"]["min_failed_locations"] == [
        "must be between 1 and 2, the monitor's number of locations"
    ]


def test_a_get_body_sent_back_is_accepted(alice: Any) -> None:
    mid = create(alice, locations=["eu", "us"])
    body = {**_alerts(alice, mid), "min_failed_locations": 1}
    response = alice.put(f"{URL}/{mid}/alerts", json=body)
    assert response.status_code == 200, response.get_json()
    assert _quorum(response.get_json()["data"]) == (1, 1)


def test_losing_locations_caps_the_quorum_in_force(alice: Any) -> None:
    mid = create(alice, locations=["eu", "us", "ap"])
    alice.put(f"{URL}/{mid}/alerts", json={"min_failed_locations": 3})
    assert alice.put(f"{URL}/{mid}", json={"locations": ["eu", "us"]}).status_code == 200
    assert _quorum(_alerts(alice, mid)) == (3, 2)


def test_another_users_settings_are_not_theirs(alice: Any, bob: Any) -> None:
    mine = create(alice, locations=["eu", "us", "ap"])
    theirs = create(bob, locations=["eu", "us", "ap"])
    alice.put(f"{URL}/{mine}/alerts", json={"min_failed_locations": 1})
    for response in (
        bob.get(f"{URL}/{mine}/alerts"),
        bob.put(f"{URL}/{mine}/alerts", json={"min_failed_locations": 3}),
    ):
        assert_error(response, 404, "MONITOR_NOT_FOUND")
    assert _quorum(_alerts(alice, mine)) == (1, 1)
    assert _quorum(_alerts(bob, theirs)) == (None, 2)
    bob.put(f"{URL}/{theirs}/alerts", json={"min_failed_locations": 3})
    assert _quorum(_alerts(alice, mine)) == (1, 1)


def _entry(**fields: Any) -> dict[str, Any]:
    return {"name": "api", "type": "http", "url": "http://127.0.0.1:9/", **fields}


def test_apply_sets_it_and_export_gives_it_back(alice: Any) -> None:
    entry = _entry(locations=["eu", "us", "ap"], alerts={"min_failed_locations": 1})
    response = alice.post(f"{URL}/apply", json={"monitors": [entry]})
    assert response.status_code == 200, response.get_json()
    [step] = response.get_json()["data"]["plan"]
    assert {"field": "alerts.min_failed_locations", "old": None, "new": 1} in step["changes"]
    [exported] = alice.get(f"{URL}/export").get_json()["data"]["monitors"]
    assert exported["alerts"] == {"min_failed_locations": 1}
    again = alice.post(f"{URL}/apply", json={"monitors": [exported]}).get_json()["data"]
    assert [s["action"] for s in again["plan"]] == ["unchanged"]


def test_apply_refuses_a_quorum_above_the_entrys_locations(alice: Any) -> None:
    entry = _entry(locations=["eu", "us"], alerts={"min_failed_locations": 3})
    response = alice.post(f"{URL}/apply", json={"monitors": [entry]})
    assert_error(
        response, 400, "VALIDATION_ERROR", "monitors[0].alerts.min_failed_locations", only=True
    )
    assert AlertSettings.select().count() == 0
