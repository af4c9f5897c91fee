"""``uptime monitors alerts ID --min-failed-locations N`` / ``--majority`` against a live daemon."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import create
from tests.cli.conftest import Cli
from tests.outcomes import outcome_at
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_LOCATIONS": "eu,us,ap"}


def _monitor(alice: Any) -> str:
    # The CLI has no option for locations; `uptime apply` or the API sets them.
    return str(create(alice, locations=["eu", "us", "ap"]))


def test_it_sets_shows_and_resets_the_quorum(cli: Cli, alice: Any) -> None:
    mid = _monitor(alice)
    shown = cli.ok("monitors", "alerts", mid).stdout
    assert "2 locations fail (majority)" in shown
    alerts = cli.json("monitors", "alerts", mid, "--min-failed-locations", "3")
    assert (alerts["min_failed_locations"], alerts["effective_min_failed_locations"]) == (3, 3)
    assert "3 locations fail (set)" in cli.ok("monitors", "alerts", mid).stdout
    alerts = cli.json("monitors", "alerts", mid, "--majority")
    assert (alerts["min_failed_locations"], alerts["effective_min_failed_locations"]) == (None, 2)


def test_it_reports_a_quorum_above_the_locations(cli: Cli, alice: Any) -> None:
    mid = _monitor(alice)
    result = cli("monitors", "alerts", mid, "--min-failed-locations", "4")
    assert result.exit_code == 4
    assert "min_failed_locations" in result.stderr
    both = cli("monitors", "alerts", mid, "--min-failed-locations", "2", "--majority")
    assert both.exit_code == 2 and "not both" in both.stderr


def test_show_lists_the_locations_and_the_stale_ones(cli: Cli, alice: Any) -> None:
    mid = _monitor(alice)
    shown = cli.ok("monitors", "show", mid).stdout
    for location in ("eu", "us", "ap"):
        assert f"{location}: no run yet" in shown
    assert "stale" not in shown
    data = cli.json("monitors", "show", mid)
    assert [s["location"] for s in data["locations_status"]] == ["eu", "us", "ap"]
    assert data["stale_locations"] == []


def test_show_marks_a_stale_location(cli: Cli, alice: Any, settings: Any, clock: Any) -> None:
    mid = _monitor(alice)
    monitor = Monitor.get_by_id(int(mid))
    old = clock.now() - timedelta(seconds=200)  # more than 1.5 × 60 s ago
    Recorder(settings).record(
        [
            outcome_at(monitor, old, False, location="us"),
            outcome_at(monitor, clock.now(), True, location="eu"),
            outcome_at(monitor, clock.now(), True, location="ap"),
        ],
        now=clock.now(),
    )
    shown = cli.ok("monitors", "show", mid).stdout
    assert "us: offline" in shown and "(stale)" in shown
    assert shown.count("stale") == 1
    assert cli.json("monitors", "show", mid)["stale_locations"] == ["us"]
