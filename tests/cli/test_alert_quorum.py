"""``uptime monitors alerts ID --min-failed-locations N`` / ``--majority`` against a live daemon."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import create
from tests.cli.conftest import Cli


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
