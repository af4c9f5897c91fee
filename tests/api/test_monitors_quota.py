"""The per-user monitor cap (UPTIME_MAX_MONITORS_PER_USER)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body

URL = "/api/v1/monitors"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_MAX_MONITORS_PER_USER": "2"}


def test_it_refuses_one_more_than_the_cap(alice: Any) -> None:
    create(alice)
    create(alice)
    response = alice.post(URL, json=monitor_body(name="third"))
    error = assert_error(response, 403, "QUOTA_EXCEEDED")
    assert "2" in error["message"]
    assert alice.get(URL).get_json()["pagination"]["total"] == 2


def test_it_counts_per_user(alice: Any, bob: Any) -> None:
    create(alice)
    create(alice)
    assert bob.post(URL, json=monitor_body()).status_code == 201


def test_it_counts_unchecked_types_and_frees_room_on_delete(alice: Any) -> None:
    first = create(alice)
    assert alice.post(URL, json={"name": "dns", "type": "dns"}).status_code == 201
    assert_error(alice.post(URL, json=monitor_body()), 403, "QUOTA_EXCEEDED")
    alice.delete(f"{URL}/{first}")
    assert alice.post(URL, json=monitor_body()).status_code == 201
