"""The per-user monitor cap (UPTIME_MAX_MONITORS_PER_USER)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body
from uptime_server.models import Monitor

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


def test_it_counts_every_type_and_frees_room_on_delete(alice: Any) -> None:
    first = create(alice)
    dns = {"name": "dns", "type": "dns", "url": "dns://example.test"}
    assert alice.post(URL, json=dns).status_code == 201
    assert_error(alice.post(URL, json=monitor_body()), 403, "QUOTA_EXCEEDED")
    alice.delete(f"{URL}/{first}")
    assert alice.post(URL, json=monitor_body()).status_code == 201


def test_concurrent_creates_never_exceed_the_cap(
    app: Any, alice: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creates from several threads at once: exactly the cap succeeds, on each backend.

    Each create is held just before its INSERT until every thread has got
    that far or a moment has passed, so without the lock all of them would
    count the same monitors and insert; with it, they count one by one.
    """
    threads, window = 6, 0.5
    arrived = 0
    all_counted = threading.Condition()
    insert = Monitor.create

    def create_after_the_others_counted(**fields: Any) -> Monitor:
        nonlocal arrived
        with all_counted:
            arrived += 1
            all_counted.notify_all()
            all_counted.wait_for(lambda: arrived >= threads, timeout=window)
        return insert(**fields)

    monkeypatch.setattr(Monitor, "create", create_after_the_others_counted)
    start = threading.Barrier(threads)

    def post(i: int) -> tuple[int, str | None]:
        client = app.test_client()
        client.set_cookie("session_cookie", alice.token)
        start.wait()
        response = client.post(URL, json=monitor_body(name=f"m{i}"))
        error = (response.get_json().get("error") or {}).get("code")
        return response.status_code, error

    with ThreadPoolExecutor(threads) as pool:
        results = sorted(pool.map(post, range(threads)), key=lambda r: r[0])

    cap = settings.max_monitors_per_team
    assert results == [(201, None)] * cap + [(403, "QUOTA_EXCEEDED")] * (threads - cap)
    assert Monitor.select().where(Monitor.user == alice.user.id).count() == cap


def test_an_apply_over_the_cap_rolls_back_its_deletes_and_creates(alice: Any) -> None:
    create(alice, name="gone")
    entries = [monitor_body(name=n) for n in ("a", "b", "c")]
    response = alice.post("/api/v1/monitors/apply", json={"monitors": entries, "prune": True})
    assert_error(response, 403, "QUOTA_EXCEEDED")
    assert [m.name for m in Monitor.select()] == ["gone"]
