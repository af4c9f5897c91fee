"""GET /monitors/{id}/stats: exact figures from runs fed through the real writer.

The clock stands at 2026-11-22T12:00:00Z (a 5-minute boundary), so the 24h
window is exactly [2026-11-21T12:00Z, now].
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.api.shapes import assert_error
from tests.stats.conftest import Run, nearest_rank


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# Older runs: outside 30d, inside 30d, inside 7d, and an incident that
# starts before the 24h window and ends inside it.
HISTORY = [
    Run(at("2026-10-20T08:00:00"), passed=False),
    Run(at("2026-10-20T08:05:00"), rt=500),
    *[Run(at(f"2026-11-01T00:0{i}:00"), rt=100) for i in range(4)],
    Run(at("2026-11-19T00:00:00"), passed=False),
    Run(at("2026-11-19T00:05:00"), passed=False),
    Run(at("2026-11-19T00:10:00"), rt=100),
    Run(at("2026-11-21T11:00:00"), passed=False),  # incident opens, 1h before the window
]
# Inside the 24h window.
DAY_RUNS = [
    Run(at("2026-11-21T12:30:00"), rt=80),  # recovery: 1800 s of it inside the window
    *[Run(at(f"2026-11-22T09:{m}0:00"), rt=100 + 10 * m) for m in range(6)],
    Run(at("2026-11-22T10:00:00"), rt=200, retried=True),  # warning counts as passed
    Run(at("2026-11-22T10:10:00"), passed=False),  # incident 10:10 .. 10:30
    Run(at("2026-11-22T10:20:00"), passed=False),
    Run(at("2026-11-22T10:30:00"), rt=300),
    Run(at("2026-11-22T11:00:00"), rt=90),
    Run(at("2026-11-22T11:30:00"), passed=False),  # open incident, 30 min to now
    Run(at("2026-11-22T11:40:00"), passed=False),
]
PASSED_RTS = [80, 100, 110, 120, 130, 140, 150, 200, 300, 90]


@pytest.fixture
def monitor(alice, new_monitor, feeder):
    m = new_monitor(alice)
    feeder.feed(m, HISTORY + DAY_RUNS)
    return m


def stats(user, monitor_id, **params):
    r = user.get(f"/api/v1/monitors/{monitor_id}/stats", query_string=params)
    assert r.status_code == 200, r.json
    return r.json["data"]


def within_2pc(got, exact):
    return got is not None and abs(got - exact) <= 0.02 * exact


def test_it_gives_exact_figures_for_24h(alice, monitor):
    data = stats(alice, monitor.id)
    assert (data["period"], data["granularity"]) == ("24h", "1h")
    assert data["uptime"] == {"24h": 71.429, "7d": 61.111, "30d": 68.182}
    rt = data["response_times"]
    assert (rt["avg"], rt["min"], rt["max"]) == (142, 80, 300)
    assert within_2pc(rt["p95"], nearest_rank(PASSED_RTS, 0.95))
    assert data["checks"] == {"total": 14, "successful": 10, "failed": 4}
    # 10:10-10:30 and the open 11:30-now started in the window; the one
    # from yesterday 11:00 is clipped to its last 30 minutes.
    assert data["incidents"] == {
        "count": 2,
        "total_downtime": 1800 + 1200 + 1800,
        "blocked_downtime": 0,
    }


def test_the_hourly_series_has_every_bucket_oldest_first(alice, monitor):
    series = stats(alice, monitor.id, period="24h", granularity="1h")["series"]
    assert len(series) == 25
    assert series[0]["start"] == "2026-11-21T12:00:00Z"
    assert series[-1]["start"] == "2026-11-22T12:00:00Z"
    by_start = {p["start"]: p for p in series}
    first = by_start["2026-11-21T12:00:00Z"]
    assert first == {
        "start": "2026-11-21T12:00:00Z",
        "checks": 1,
        "failed": 0,
        "uptime": 100.0,
        "avg_response_time": 80,
        "p95_response_time": 80,
    }
    nine = by_start["2026-11-22T09:00:00Z"]
    assert (nine["checks"], nine["failed"], nine["uptime"], nine["avg_response_time"]) == (
        6,
        0,
        100.0,
        125,
    )
    assert within_2pc(nine["p95_response_time"], 150)
    ten = by_start["2026-11-22T10:00:00Z"]
    assert (ten["checks"], ten["failed"], ten["uptime"], ten["avg_response_time"]) == (
        4,
        2,
        50.0,
        250,
    )
    eleven = by_start["2026-11-22T11:00:00Z"]
    assert (eleven["checks"], eleven["failed"], eleven["uptime"]) == (3, 2, 33.333)
    empty = {
        "checks": 0,
        "failed": 0,
        "uptime": None,
        "avg_response_time": None,
        "p95_response_time": None,
    }
    assert {k: v for k, v in by_start["2026-11-21T13:00:00Z"].items() if k != "start"} == empty
    assert {k: v for k, v in series[-1].items() if k != "start"} == empty
    assert sum(p["checks"] for p in series) == 14
    assert sum(p["failed"] for p in series) == 4


def test_five_minute_and_daily_series(alice, monitor):
    five = stats(alice, monitor.id, granularity="5m")["series"]
    assert len(five) == 289
    assert five[0]["start"] == "2026-11-21T12:00:00Z"
    failed = [p["start"] for p in five if p["failed"]]
    assert failed == [
        "2026-11-22T10:10:00Z",
        "2026-11-22T10:20:00Z",
        "2026-11-22T11:30:00Z",
        "2026-11-22T11:40:00Z",
    ]
    daily = stats(alice, monitor.id, granularity="1d")["series"]
    # Yesterday's bucket counts only the part inside the window: the 11:00
    # failure before it is left out.
    assert [(p["start"], p["checks"], p["failed"]) for p in daily] == [
        ("2026-11-21T00:00:00Z", 1, 0),
        ("2026-11-22T00:00:00Z", 13, 4),
    ]


def test_longer_periods(alice, monitor):
    week = stats(alice, monitor.id, period="7d", granularity="1d")
    assert len(week["series"]) == 8
    assert week["series"][0]["start"] == "2026-11-15T00:00:00Z"
    assert week["checks"] == {"total": 18, "successful": 11, "failed": 7}
    # 11-19 00:00-00:10, yesterday 11:00, 10:10, 11:30; the open one to now.
    assert week["incidents"] == {
        "count": 4,
        "total_downtime": 600 + 5400 + 1200 + 1800,
        "blocked_downtime": 0,
    }
    month = stats(alice, monitor.id, period="30d", granularity="1h")
    assert len(month["series"]) == 721
    assert month["checks"]["total"] == 22
    assert month["response_times"]["max"] == 300
    quarter = stats(alice, monitor.id, period="90d")
    assert quarter["granularity"] == "1d"  # 1h would give 2161 buckets
    assert len(quarter["series"]) == 91
    assert quarter["checks"] == {"total": 24, "successful": 16, "failed": 8}
    assert quarter["response_times"]["max"] == 500
    assert quarter["incidents"]["count"] == 5


def test_a_monitor_without_runs_gives_nulls(alice, new_monitor):
    m = new_monitor(alice, "quiet")
    data = stats(alice, m.id, period="7d", granularity="1d")
    assert data["uptime"] == {"24h": None, "7d": None, "30d": None}
    assert data["response_times"] == {"avg": None, "min": None, "max": None, "p95": None}
    assert data["checks"] == {"total": 0, "successful": 0, "failed": 0}
    assert data["incidents"] == {"count": 0, "total_downtime": 0, "blocked_downtime": 0}
    assert len(data["series"]) == 8 and all(p["checks"] == 0 for p in data["series"])


def test_only_failures_give_null_response_times(alice, new_monitor, feeder):
    m = new_monitor(alice, "down")
    feeder.feed(m, [Run(at("2026-11-22T11:50:00"), passed=False)])
    data = stats(alice, m.id)
    assert data["uptime"]["24h"] == 0.0
    assert data["response_times"] == {"avg": None, "min": None, "max": None, "p95": None}
    assert data["incidents"] == {"count": 1, "total_downtime": 600, "blocked_downtime": 0}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"period": "1w"}, "period"),
        ({"period": "24H"}, "period"),
        ({"granularity": "2h"}, "granularity"),
        ({"period": "7d", "granularity": "5m"}, "granularity"),  # 2017 buckets
        ({"period": "30d", "granularity": "5m"}, "granularity"),
        ({"period": "90d", "granularity": "1h"}, "granularity"),  # 2161 buckets
    ],
)
def test_bad_parameters_are_validation_errors(alice, new_monitor, params, field):
    m = new_monitor(alice)
    r = alice.get(f"/api/v1/monitors/{m.id}/stats", query_string=params)
    assert_error(r, 400, "VALIDATION_ERROR", field, only=True)


def test_both_bad_parameters_are_named(alice, new_monitor):
    m = new_monitor(alice)
    r = alice.get(f"/api/v1/monitors/{m.id}/stats?period=1y&granularity=1w")
    assert_error(r, 400, "VALIDATION_ERROR", "granularity", "period", only=True)


@pytest.mark.parametrize(
    ("period", "granularity", "buckets"),
    [("24h", "5m", 289), ("7d", "1h", 169), ("30d", "1d", 31), ("90d", "1d", 91)],
)
def test_the_bucket_limit_admits_up_to_2000(alice, new_monitor, period, granularity, buckets):
    m = new_monitor(alice)
    data = stats(alice, m.id, period=period, granularity=granularity)
    assert len(data["series"]) == buckets


def test_other_users_monitors_are_not_found(alice, bob, monitor):
    r = bob.get(f"/api/v1/monitors/{monitor.id}/stats")
    assert r.status_code == 404
    assert r.json["error"]["code"] == "MONITOR_NOT_FOUND"
    assert alice.get("/api/v1/monitors/999999/stats").status_code == 404


def test_it_needs_a_session(anon, monitor):
    r = anon.get(f"/api/v1/monitors/{monitor.id}/stats")
    assert r.status_code == 401
    assert r.json["error"]["code"] == "UNAUTHORIZED"
