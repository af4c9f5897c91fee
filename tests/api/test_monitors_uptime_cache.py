"""The uptime figures the API keeps between requests (stats.uptime_cache) are never stale.

A figure is served again only while the monitor's ``rollup_version`` and the
window's edges are the ones it was computed for: a roll-up write, a recorded
check and a sliding window each give a fresh figure, on both dialects.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.api.shapes import create
from tests.outcomes import outcome
from uptime_server.db import write_tx
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor
from uptime_server.stats import rollups
from uptime_server.stats.uptime_cache import cache

NOW = datetime(2026, 11, 22, 12, 3, 17, tzinfo=UTC)


def _add(monitor_id: int, at: datetime, *passed: bool) -> None:
    with write_tx():
        rollups.add_runs(
            [
                rollups.RunSample(monitor_id, int(at.timestamp()), ok, 100 if ok else None)
                for ok in passed
            ]
        )


def _uptime(user: Any, monitor_id: int) -> tuple[Any, Any]:
    shown = user.get(f"/api/v1/monitors/{monitor_id}").get_json()["data"]
    listed = {m["id"]: m for m in user.get("/api/v1/monitors").get_json()["data"]}
    return shown["uptime_24h"], listed[monitor_id]["uptime_24h"]


def test_a_roll_up_write_moves_the_version_and_the_figure(alice: Any, clock: Any) -> None:
    clock.set(NOW)
    mid = create(alice)
    other = create(alice, name="other")
    _add(mid, NOW - timedelta(hours=1), True, True, True, False)
    assert _uptime(alice, mid) == (75.0, 75.0)
    hits = cache.hits
    assert _uptime(alice, mid) == (75.0, 75.0)
    assert cache.hits > hits  # served from the cache while nothing moved
    before = {m.id: m.rollup_version for m in Monitor.select()}
    _add(mid, NOW - timedelta(minutes=2), False, False, False, False)
    after = {m.id: m.rollup_version for m in Monitor.select()}
    assert after[mid] == before[mid] + 1
    assert after[other] == before[other]  # only the monitor written
    assert _uptime(alice, mid) == (37.5, 37.5)


def test_a_recorded_check_shows_in_the_next_answer(alice: Any, settings: Any, clock: Any) -> None:
    clock.set(NOW)
    mid = create(alice)
    assert _uptime(alice, mid) == (None, None)
    monitor = Monitor.get_by_id(mid)
    Recorder(settings).record([outcome(monitor, clock, True)], now=clock.now())
    assert _uptime(alice, mid) == (100.0, 100.0)
    Recorder(settings).record([outcome(monitor, clock, False)], now=clock.now())
    assert _uptime(alice, mid) == (50.0, 50.0)


def test_the_recorder_moves_the_version_with_the_state_in_one_row_update(
    alice: Any, settings: Any, clock: Any
) -> None:
    """The version moves in the recorder's update of the monitor's state, and
    ``add_runs`` leaves alone the monitors it is told were moved already."""
    clock.set(NOW)
    first, second, idle = create(alice), create(alice, name="b"), create(alice, name="c")
    before = {m.id: m.rollup_version for m in Monitor.select()}
    monitors = [Monitor.get_by_id(first), Monitor.get_by_id(second)]
    Recorder(settings).record([outcome(m, clock, True) for m in monitors], now=clock.now())
    after = {m.id: m.rollup_version for m in Monitor.select()}
    assert after[first] == before[first] + 1
    assert after[second] == before[second] + 1
    assert after[idle] == before[idle]
    with write_tx():
        rollups.add_runs(
            [
                rollups.RunSample(mid, int(NOW.timestamp()), True, 100)
                for mid in (first, second, idle)
            ],
            versions_moved={first, second},
        )
    moved = {m.id: m.rollup_version for m in Monitor.select()}
    assert (moved[first], moved[second]) == (after[first], after[second])
    assert moved[idle] == after[idle] + 1
    assert _uptime(alice, first) == (100.0, 100.0)
    assert _uptime(alice, idle) == (100.0, 100.0)


def test_the_figure_follows_the_window_as_it_slides(alice: Any, clock: Any) -> None:
    clock.set(NOW)
    mid = create(alice)
    _add(mid, NOW - timedelta(hours=23, minutes=50), False)
    _add(mid, NOW - timedelta(hours=1), True)
    assert _uptime(alice, mid) == (50.0, 50.0)
    clock.set(NOW + timedelta(minutes=15))  # the failed run leaves the 24h window
    assert _uptime(alice, mid) == (100.0, 100.0)


def test_each_user_sees_only_the_figures_of_their_own_monitors(
    alice: Any, bob: Any, clock: Any
) -> None:
    clock.set(NOW)
    mine = create(alice)
    theirs = create(bob, name="bob's")
    _add(mine, NOW - timedelta(hours=1), True, False)
    _add(theirs, NOW - timedelta(hours=1), True, True, True, True)
    assert _uptime(alice, mine) == (50.0, 50.0)
    assert _uptime(bob, theirs) == (100.0, 100.0)
    assert alice.get(f"/api/v1/monitors/{theirs}").status_code == 404
    assert [m["id"] for m in alice.get("/api/v1/monitors").get_json()["data"]] == [mine]
    assert bob.get(f"/api/v1/monitors/{mine}").status_code == 404


def test_a_change_then_a_read_shows_the_change(alice: Any, clock: Any) -> None:
    clock.set(NOW)
    mid = create(alice)
    _add(mid, NOW - timedelta(hours=1), True)
    assert _uptime(alice, mid) == (100.0, 100.0)
    assert alice.put(f"/api/v1/monitors/{mid}", json={"name": "renamed"}).status_code == 200
    shown = alice.get(f"/api/v1/monitors/{mid}").get_json()["data"]
    listed = alice.get("/api/v1/monitors").get_json()["data"]
    assert (shown["name"], shown["uptime_24h"]) == ("renamed", 100.0)
    assert [(m["name"], m["uptime_24h"]) for m in listed] == [("renamed", 100.0)]
