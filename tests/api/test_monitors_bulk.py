"""POST /api/v1/monitors/bulk: pause, resume, delete, update, with per-id results."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from uptime_server.models import Monitor

URL = "/api/v1/monitors/bulk"


def bulk(user: Any, **body: Any) -> Any:
    return user.post(URL, json=body)


def _result(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def _not_found(mid: int) -> dict[str, Any]:
    return {"id": mid, "error": {"code": "MONITOR_NOT_FOUND", "message": "Monitor not found"}}


def test_it_pauses_many_and_reports_foreign_ids_as_not_found(alice: Any, bob: Any) -> None:
    a1, a2, theirs = create(alice), create(alice), create(bob)
    result = _result(bulk(alice, action="pause", monitor_ids=[a1, theirs, a2, 999], reason="dr"))
    assert result == {
        "action": "pause",
        "succeeded": [a1, a2],
        "failed": [_not_found(theirs), _not_found(999)],
    }
    for mid in (a1, a2):
        monitor = Monitor.get_by_id(mid)
        assert (monitor.paused, monitor.pause_reason) == (True, "dr")
    assert Monitor.get_by_id(theirs).paused is False


def test_it_reports_state_conflicts_per_id(alice: Any) -> None:
    running, paused = create(alice), create(alice)
    alice.post(f"/api/v1/monitors/{paused}/pause")
    result = _result(bulk(alice, action="pause", monitor_ids=[running, paused]))
    assert result["succeeded"] == [running]
    assert [(f["id"], f["error"]["code"]) for f in result["failed"]] == [
        (paused, "MONITOR_ALREADY_PAUSED")
    ]
    result = _result(bulk(alice, action="resume", monitor_ids=[running, create(alice)]))
    assert result["succeeded"] == [running]
    assert result["failed"][0]["error"]["code"] == "MONITOR_NOT_PAUSED"
    assert Monitor.get_by_id(running).status == "pending"


def test_it_deletes_many(alice: Any, bob: Any) -> None:
    a1, a2, theirs = create(alice), create(alice), create(bob)
    result = _result(bulk(alice, action="delete", monitor_ids=[a1, a2, theirs]))
    assert (result["succeeded"], result["failed"]) == ([a1, a2], [_not_found(theirs)])
    assert list(Monitor.select(Monitor.id).tuples()) == [(theirs,)]


def test_it_updates_many_with_settings(alice: Any, bob: Any) -> None:
    a1, a2, theirs = create(alice), create(alice, check_interval=300), create(bob)
    settings = {"check_interval": 120, "method": "head"}
    result = _result(bulk(alice, action="update", monitor_ids=[a1, a2, theirs], settings=settings))
    assert (result["succeeded"], result["failed"]) == ([a1, a2], [_not_found(theirs)])
    for mid in (a1, a2):
        monitor = Monitor.get_by_id(mid)
        assert (monitor.check_interval, monitor.method) == (120, "HEAD")
    assert Monitor.get_by_id(theirs).check_interval == 60


def test_it_judges_a_url_by_each_monitors_type(alice: Any) -> None:
    a, b = (
        create(alice, type="tcp", url="tcp://127.0.0.1:1"),
        create(alice, type="tcp", url="tcp://127.0.0.1:2"),
    )
    settings = {"url": "tcp://127.0.0.1:5432"}
    result = _result(bulk(alice, action="update", monitor_ids=[a, b], settings=settings))
    assert (result["succeeded"], result["failed"]) == ([a, b], [])
    assert {Monitor.get_by_id(m).url for m in (a, b)} == {"tcp://127.0.0.1:5432"}
    # An http monitor among them: its type refuses the URL, and nothing changes.
    web = create(alice)
    settings = {"url": "tcp://127.0.0.1:6379"}
    response = bulk(alice, action="update", monitor_ids=[a, web], settings=settings)
    assert_error(response, 400, "VALIDATION_ERROR", "settings.url")
    assert Monitor.get_by_id(a).url == "tcp://127.0.0.1:5432"
    # dns: the query name alone, through the URL.
    mx = alice.post(
        "/api/v1/monitors", json={"name": "mx", "type": "dns", "url": "dns://example.test"}
    ).get_json()["data"]["id"]
    settings = {"url": "dns://example.org"}
    assert _result(bulk(alice, action="update", monitor_ids=[mx], settings=settings))[
        "succeeded"
    ] == [mx]


def test_it_changes_nothing_when_settings_are_invalid_for_one(alice: Any) -> None:
    # timeout 100 fits the 300 s monitor but not the 60 s one.
    short, long = create(alice), create(alice, check_interval=300)
    response = bulk(alice, action="update", monitor_ids=[long, short], settings={"timeout": 100})
    assert_error(response, 400, "VALIDATION_ERROR", "settings.timeout")
    assert [Monitor.get_by_id(m).timeout for m in (short, long)] == [30, 30]


@pytest.mark.parametrize(
    ("patch", "code", "field"),
    [
        ({"colour": "red"}, "VALIDATION_ERROR", "settings.colour"),
        ({"timeout": "30"}, "VALIDATION_ERROR", "settings.timeout"),
        ({"type": "smtp"}, "INVALID_MONITOR_TYPE", "settings.type"),
    ],
)
@sqlite_only
def test_it_refuses_invalid_settings_before_anything_changes(
    alice: Any, bob: Any, patch: dict[str, Any], code: str, field: str
) -> None:
    mine = create(alice)
    for ids in ([mine], [create(bob)]):  # even when no id is the caller's
        response = bulk(alice, action="update", monitor_ids=ids, settings=patch)
        assert_error(response, 400, code, field)
    assert Monitor.get_by_id(mine).timeout == 30


BAD_REQUESTS = [
    ({"action": "pause", "monitor_ids": []}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": list(range(1, 102))}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": ["1"]}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": [True]}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": [0]}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": [2**63]}, "monitor_ids"),
    ({"action": "pause", "monitor_ids": 1}, "monitor_ids"),
    ({"action": "pause"}, "monitor_ids"),
    ({"action": "archive", "monitor_ids": [1]}, "action"),
    ({"monitor_ids": [1]}, "action"),
    ({"action": "pause", "monitor_ids": [1], "reason": "r" * 501}, "reason"),
    ({"action": "pause", "monitor_ids": [1], "settings": {"name": "x"}}, "settings"),
    ({"action": "update", "monitor_ids": [1]}, "settings"),
    ({"action": "update", "monitor_ids": [1], "settings": ["name"]}, "settings"),
    ({"action": "pause", "monitor_ids": [1], "force": True}, "force"),
]


@pytest.mark.parametrize(("body", "field"), BAD_REQUESTS)
@sqlite_only
def test_it_validates_the_request(alice: Any, body: dict[str, Any], field: str) -> None:
    create(alice)
    assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", field)
    assert Monitor.get_by_id(1).paused is False


def test_it_takes_up_to_100_ids(alice: Any) -> None:
    mine = create(alice)
    ids = [mine, *range(1000, 1099)]
    result = _result(bulk(alice, action="pause", monitor_ids=ids))
    assert result["succeeded"] == [mine]
    assert len(result["failed"]) == 99


def test_it_treats_repeated_ids_once(alice: Any) -> None:
    mid = create(alice)
    result = _result(bulk(alice, action="pause", monitor_ids=[mid, mid]))
    assert (result["succeeded"], result["failed"]) == ([mid], [])


@sqlite_only
def test_it_wants_a_json_object(alice: Any) -> None:
    assert_error(alice.post(URL, json=["pause"]), 400, "VALIDATION_ERROR", "body")
    assert_error(alice.post(URL), 400, "INVALID_JSON")


@sqlite_only
def test_it_names_bad_settings_with_the_rest_of_the_request(alice: Any) -> None:
    mine = create(alice)
    body = {"action": "update", "monitor_ids": [0], "settings": {"timeout": 1, "colour": "red"}}
    error = assert_error(bulk(alice, **body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"monitor_ids", "settings.timeout", "settings.colour"}
    body = {"action": "update", "monitor_ids": [mine], "reason": 5, "settings": {"type": "smtp"}}
    error = assert_error(bulk(alice, **body), 400, "INVALID_MONITOR_TYPE")
    assert set(error["details"]) == {"reason", "settings.type"}
    assert Monitor.get_by_id(mine).timeout == 30
