"""PUT /api/v1/monitors/{id}: a subset is accepted, the result validated as a whole."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from uptime_server.models import Monitor, MonitorLocation

URL = "/api/v1/monitors"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_LOCATIONS": "local,eu"}


def _get(user: Any, mid: int) -> dict[str, Any]:
    return user.get(f"{URL}/{mid}").get_json()["data"]


def test_it_changes_only_the_fields_given(alice: Any, clock: Any) -> None:
    mid = create(alice, retry_count=2, headers={"X-A": "1"})
    before = _get(alice, mid)
    clock.advance(minutes=5)
    response = alice.put(f"{URL}/{mid}", json={"name": "renamed", "method": "head"})
    assert response.status_code == 200
    after = response.get_json()["data"]
    assert after == _get(alice, mid)
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {"name", "method", "updated_at"}
    assert after["method"] == "HEAD"
    assert after["updated_at"] == "2026-11-22T12:05:00Z"
    assert after["created_at"] == before["created_at"]


def test_it_accepts_an_empty_change(alice: Any, clock: Any) -> None:
    mid = create(alice)
    before = _get(alice, mid)
    clock.advance(60)
    response = alice.put(f"{URL}/{mid}", json={})
    assert response.status_code == 200
    assert response.get_json()["data"] == before


# Changes valid on their own that make the monitor as a whole invalid.
WHOLE_INVALID = [
    ({"timeout": 90}, "timeout"),  # the stored interval is 60
    ({"check_interval": 20}, "timeout"),  # the stored timeout is 30
    ({"type": "https"}, "url"),  # the stored url is http://
    ({"url": None}, "url"),
    ({"expected_json_value": "up"}, "expected_json_value"),
]


@pytest.mark.parametrize(("change", "field"), WHOLE_INVALID)
def test_it_validates_the_result_as_a_whole(
    alice: Any, clock: Any, change: dict[str, Any], field: str
) -> None:
    mid = create(alice)
    before = _get(alice, mid)
    clock.advance(60)
    assert_error(alice.put(f"{URL}/{mid}", json=change), 400, "VALIDATION_ERROR", field)
    assert _get(alice, mid) == before


def test_it_changes_nothing_when_one_field_is_invalid(alice: Any, clock: Any) -> None:
    mid = create(alice)
    before = _get(alice, mid)
    clock.advance(60)
    response = alice.put(f"{URL}/{mid}", json={"name": "new", "retry_count": 99})
    assert_error(response, 400, "VALIDATION_ERROR", "retry_count")
    assert _get(alice, mid) == before


def test_it_refuses_clearing_json_path_under_an_expected_value(alice: Any) -> None:
    mid = create(alice, json_path="$.status", expected_json_value="up")
    response = alice.put(f"{URL}/{mid}", json={"json_path": None})
    assert_error(response, 400, "VALIDATION_ERROR", "expected_json_value")
    ok = alice.put(f"{URL}/{mid}", json={"json_path": None, "expected_json_value": None})
    assert ok.status_code == 200


@sqlite_only
def test_it_names_unknown_and_read_only_fields(alice: Any) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}", json={"colour": "red", "id": 7, "status": "online"})
    assert_error(response, 400, "VALIDATION_ERROR", "colour", "id", "status")


@sqlite_only
def test_it_refuses_unknown_types(alice: Any) -> None:
    mid = create(alice)
    assert_error(alice.put(f"{URL}/{mid}", json={"type": "smtp"}), 400, "INVALID_MONITOR_TYPE")
    assert _get(alice, mid)["type"] == "http"


@sqlite_only
def test_it_refuses_wrong_types(alice: Any) -> None:
    mid = create(alice)
    assert_error(alice.put(f"{URL}/{mid}", json={"timeout": "30"}), 400, "VALIDATION_ERROR")


@sqlite_only
def test_it_wants_a_json_object(alice: Any) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}", json=["name"])
    assert_error(response, 400, "VALIDATION_ERROR", "body")
    assert_error(alice.put(f"{URL}/{mid}"), 400, "INVALID_JSON")


def test_it_moves_between_checked_types_keeping_the_schedule(alice: Any) -> None:
    # Every type is checked since issue 12: a type change keeps the state and
    # the schedule, and the next check of the new type decides.
    mid = create(alice)
    Monitor.update(status="online").where(Monitor.id == mid).execute()
    body = {"type": "ping", "url": "ping://127.0.0.1"}
    ping = alice.put(f"{URL}/{mid}", json=body).get_json()["data"]
    assert (ping["status"], ping["checks_supported"], ping["next_check_at"]) == (
        "online",
        True,
        "2026-11-22T12:00:00Z",
    )
    assert MonitorLocation.select().where(MonitorLocation.monitor == mid).count() == 1
    body = {"type": "http", "url": "http://127.0.0.1:9/"}
    http = alice.put(f"{URL}/{mid}", json=body).get_json()["data"]
    assert (http["status"], http["checks_supported"]) == ("online", True)
    assert http["next_check_at"] == "2026-11-22T12:00:00Z"


def test_it_keeps_one_schedule_row_per_location(alice: Any) -> None:
    mid = create(alice)

    def scheduled() -> list[str]:
        rows = MonitorLocation.select().where(MonitorLocation.monitor == mid)
        return sorted(row.location for row in rows)

    assert scheduled() == ["local"]
    alice.put(f"{URL}/{mid}", json={"locations": ["local", "eu"]})
    assert scheduled() == ["eu", "local"]
    alice.put(f"{URL}/{mid}", json={"locations": ["eu"]})
    assert scheduled() == ["eu"]
    assert_error(alice.put(f"{URL}/{mid}", json={"locations": ["mars"]}), 400, "VALIDATION_ERROR")
    assert scheduled() == ["eu"]


def test_it_brings_the_next_check_forward_when_the_interval_shrinks(alice: Any, clock: Any) -> None:
    mid = create(alice, check_interval=3600)
    MonitorLocation.update(next_check_at=clock.now().replace(hour=13)).where(
        MonitorLocation.monitor == mid
    ).execute()
    response = alice.put(f"{URL}/{mid}", json={"check_interval": 60})
    assert response.get_json()["data"]["next_check_at"] == "2026-11-22T12:01:00Z"


def test_it_answers_404_for_an_unknown_monitor(alice: Any) -> None:
    response = alice.put(f"{URL}/999", json={"name": "x"})
    assert_error(response, 404, "MONITOR_NOT_FOUND")


@sqlite_only
def test_it_names_every_bad_field_at_once(alice: Any) -> None:
    mid = create(alice)
    before = _get(alice, mid)
    change = {"url": None, "method": "FETCH", "check_interval": 20, "colour": "red"}
    response = alice.put(f"{URL}/{mid}", json=change)
    error = assert_error(response, 400, "VALIDATION_ERROR", "url", "method", "timeout", "colour")
    assert set(error["details"]) == {"url", "method", "timeout", "colour"}
    assert _get(alice, mid) == before


def test_a_ping_monitor_from_0_1_0_is_scheduled_once_given_a_target(alice: Any) -> None:
    # 0.1.0 stored ping monitors without a target and without a schedule
    # (docs/monitors.md): the edit that gives one a valid url schedules it.
    mid = create(alice, type="ping", url="ping://127.0.0.1")
    Monitor.update(url=None).where(Monitor.id == mid).execute()
    MonitorLocation.delete().where(MonitorLocation.monitor == mid).execute()
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["next_check_at"] is None
    assert_error(alice.put(f"{URL}/{mid}", json={"name": "gw"}), 400, "VALIDATION_ERROR", "url")
    data = alice.put(f"{URL}/{mid}", json={"url": "ping://127.0.0.1"}).get_json()["data"]
    assert (data["checks_supported"], data["next_check_at"]) == (True, "2026-11-22T12:00:00Z")
    assert MonitorLocation.select().where(MonitorLocation.monitor == mid).count() == 1
