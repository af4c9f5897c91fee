"""json_path on create, update and bulk update: pathological expressions are refused."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only

URL = "/api/v1/monitors"

REFUSED = [
    ("$..*..*..*", "may use at most 1 descendant segment (..)"),
    ("$.*.*.*", "may use at most 2 wildcards (* or [*])"),
    ("$." + "a" * 255, "256 characters"),
    ("$.a[?(@.n =~ '(a+)+$')]", "must not use regular expressions (=~ or sub())"),
    ("$.a * 99999999", "must not use arithmetic (+ - * /)"),
]


def _json_path_messages(response: Any, field: str = "json_path") -> list[str]:
    error = assert_error(response, 400, "VALIDATION_ERROR", field)
    return error["details"][field]


@pytest.mark.parametrize(("path", "problem"), REFUSED)
@sqlite_only
def test_create_refuses_a_pathological_json_path(alice: Any, path: str, problem: str) -> None:
    messages = _json_path_messages(alice.post(URL, json=monitor_body(json_path=path)))
    assert any(problem in message for message in messages), messages
    assert alice.get(URL).get_json()["pagination"]["total"] == 0


@pytest.mark.parametrize(("path", "problem"), REFUSED)
@sqlite_only
def test_update_refuses_a_pathological_json_path(alice: Any, path: str, problem: str) -> None:
    mid = create(alice, json_path="$.status")
    messages = _json_path_messages(alice.put(f"{URL}/{mid}", json={"json_path": path}))
    assert any(problem in message for message in messages), messages
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["json_path"] == "$.status"


@sqlite_only
def test_bulk_update_refuses_a_pathological_json_path(alice: Any) -> None:
    mid = create(alice)
    body = {"action": "update", "monitor_ids": [mid], "settings": {"json_path": "$..a..b"}}
    response = alice.post(f"{URL}/bulk", json=body)
    messages = _json_path_messages(response, "settings.json_path")
    assert any("descendant" in message for message in messages), messages
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["json_path"] is None


@pytest.mark.parametrize(
    "path", ["$..status", "$.items[*].checks[*].state", "$." + "a" * 254, "$..[?(@.up)].name"]
)
def test_paths_within_the_limits_are_accepted(alice: Any, path: str) -> None:
    mid = create(alice, json_path=path)
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["json_path"] == path
