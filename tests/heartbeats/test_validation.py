"""Heartbeat monitor fields: one schedule, no url, fields of other types refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.heartbeats.conftest import URL, make_heartbeat

pytestmark = sqlite_only

BASE = {"name": "backup", "type": "heartbeat"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "period"),
        ({"period": 60, "cron": "* * * * *"}, "cron"),
        ({"period": 0}, "period"),
        ({"period": 366 * 86400}, "period"),
        ({"period": "60"}, "period"),
        ({"period": 60, "grace": -1}, "grace"),
        ({"cron": "0 3 * *"}, "cron"),
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "0 3 * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"period": 60, "timezone": "Europe/Berlin"}, "timezone"),
        ({"period": 60, "url": "http://127.0.0.1/"}, "url"),
        ({"period": 60, "method": "POST"}, "method"),
        ({"period": 60, "count": 3}, "count"),
        ({"period": 60, "retry_count": 2}, "retry_count"),
    ],
)
def test_it_refuses(alice: Any, body: dict[str, Any], field: str) -> None:
    assert_error(alice.post(URL, json={**BASE, **body}), 400, "VALIDATION_ERROR", field)


def test_other_types_refuse_heartbeat_fields(alice: Any) -> None:
    body = {"name": "web", "type": "http", "url": "http://127.0.0.1/", "period": 60, "cron": "x"}
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", "period", "cron")
    assert error["details"]["period"] == ["applies only to heartbeat monitors"]


def test_defaults(alice: Any) -> None:
    m = make_heartbeat(alice, grace=None)
    data = alice.get(f"{URL}/{m['id']}").get_json()["data"]
    assert (data["period"], data["grace"], data["cron"], data["timezone"]) == (
        3600,
        300,
        None,
        None,
    )
    assert data["url"] is None
    cron = make_heartbeat(alice, period=None, cron="0 3 * * *", grace=None)
    data = alice.get(f"{URL}/{cron['id']}").get_json()["data"]
    assert (data["timezone"], data["grace"]) == ("UTC", 300)


def test_list_filters_and_shows_heartbeats(alice: Any) -> None:
    make_heartbeat(alice)
    listed = alice.get(URL, query_string={"type": "heartbeat"}).get_json()
    assert [m["type"] for m in listed["data"]] == ["heartbeat"]


@pytest.mark.parametrize("cron", ["0 0 30 2 *", "0 0 31 4,6,9,11 *"])
def test_a_cron_that_never_fires_is_refused_not_a_500(alice: Any, cron: str) -> None:
    """Issue 29: it used to pass as valid, then fail computing the first deadline."""
    body = {**BASE, "period": None, "cron": cron}
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", "cron", only=True)
    assert "fires" in error["details"]["cron"][0]
    m = make_heartbeat(alice)
    response = alice.put(f"{URL}/{m['id']}", json={"period": None, "cron": cron})
    assert_error(response, 400, "VALIDATION_ERROR", "cron", only=True)
    assert alice.get(f"{URL}/{m['id']}").get_json()["data"]["period"] == 3600
    # Every minute is fine for a heartbeat.
    assert (
        alice.put(f"{URL}/{m['id']}", json={"period": None, "cron": "* * * * *"}).status_code == 200
    )
