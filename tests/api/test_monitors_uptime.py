"""uptime_24h/7d/30d of a monitor: exact over the runs the roll-ups hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.api.shapes import create
from uptime_server.db import write_tx
from uptime_server.stats import rollups

# Not on any 5-minute, hour or day boundary, so every kind of edge is exercised.
NOW = datetime(2026, 11, 22, 12, 3, 17, tzinfo=UTC)
WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}


def _runs(monitor_id: int) -> list[rollups.RunSample]:
    """A run every 47 minutes for 31 days; about one in seven fails."""
    samples = []
    at = NOW - timedelta(days=31)
    i = 0
    while at <= NOW:
        passed = i % 7 != 3
        samples.append(
            rollups.RunSample(monitor_id, int(at.timestamp()), passed, 100 if passed else None)
        )
        at += timedelta(minutes=47)
        i += 1
    return samples


def _expected(samples: list[rollups.RunSample], window: timedelta) -> float:
    start = int((NOW - window).timestamp()) // 300 * 300
    inside = [s for s in samples if s.epoch >= start]
    return round(sum(s.passed for s in inside) * 100 / len(inside), 3)


def test_it_reports_uptime_over_each_window(alice: Any, clock: Any) -> None:
    clock.set(NOW)
    mid = create(alice)
    quiet = create(alice, name="no runs")
    samples = _runs(mid)
    with write_tx():
        rollups.add_runs(samples)
    monitor = alice.get(f"/api/v1/monitors/{mid}").get_json()["data"]
    expected = {w: _expected(samples, span) for w, span in WINDOWS.items()}
    assert {w: monitor[f"uptime_{w}"] for w in WINDOWS} == expected
    assert len(set(expected.values())) > 1  # the windows really differ
    listed = {m["id"]: m["uptime_24h"] for m in alice.get("/api/v1/monitors").get_json()["data"]}
    assert listed == {mid: expected["24h"], quiet: None}
    none = alice.get(f"/api/v1/monitors/{quiet}").get_json()["data"]
    assert (none["uptime_24h"], none["uptime_7d"], none["uptime_30d"]) == (None, None, None)
