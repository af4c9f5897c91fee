"""Raw history and stats agree over 24h, under the documented edge rule.

Edge rule (uptime_server.stats): the window runs from ``now - 24h`` rounded
down to 5 minutes up to now. Irregular runs (sub-second times, warnings,
failures, a spread of response times) go through the real writer; at
several unaligned moments the stats must equal what the raw runs say.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

from tests.stats.conftest import Run, nearest_rank
from uptime_server.models import CheckRun

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def random_runs(seed: int) -> list[Run]:
    rng = random.Random(seed)
    runs, t = [], START - timedelta(hours=26, seconds=rng.random() * 300)
    while t < START + timedelta(hours=2):
        passed = rng.random() > 0.15
        rt = int(rng.lognormvariate(math.log(150), 0.8))
        runs.append(Run(t, passed=passed, rt=rt, retried=passed and rng.random() < 0.05))
        t += timedelta(seconds=rng.uniform(20, 400))
    return runs


def raw_figures(monitor_id: int, start: datetime, now: datetime, step: int) -> dict:
    """What the raw CheckRun rows say about [start, now] and its buckets."""
    rows = list(
        CheckRun.select().where(
            (CheckRun.monitor == monitor_id)
            & (CheckRun.checked_at >= start)
            & (CheckRun.checked_at <= now)
        )
    )
    rts = [r.response_time for r in rows if r.status != "offline"]
    buckets: dict[int, list[CheckRun]] = {}
    for r in rows:
        epoch = int(r.checked_at.timestamp())
        buckets.setdefault(epoch // step * step, []).append(r)
    return {
        "total": len(rows),
        "failed": sum(r.status == "offline" for r in rows),
        "rts": rts,
        "buckets": {k: (len(v), sum(r.status == "offline" for r in v)) for k, v in buckets.items()},
    }


# Unaligned moments at which the stats are read, runs recorded up to each.
MOMENTS = [
    START - timedelta(hours=1, seconds=-17.5),
    START - timedelta(minutes=2, microseconds=1),
    START + timedelta(hours=1, minutes=57, seconds=3.25),
]


def test_raw_runs_and_stats_agree_over_24h(alice, new_monitor, feeder, clock):
    m = new_monitor(alice)
    pending = random_runs(seed=5)
    for now in MOMENTS:
        due = [r for r in pending if r.at <= now]
        pending = [r for r in pending if r.at > now]
        feeder.feed(m, due, batch=50)
        clock.set(now)
        start_epoch = (math.floor(now.timestamp()) - 86400) // 300 * 300
        start = datetime.fromtimestamp(start_epoch, UTC)
        for granularity, step in (("5m", 300), ("1h", 3600)):
            r = alice.get(
                f"/api/v1/monitors/{m.id}/stats",
                query_string={"period": "24h", "granularity": granularity},
            )
            data = r.json["data"]
            raw = raw_figures(m.id, start, now, step)
            assert data["checks"]["total"] == raw["total"] > 200
            assert data["checks"]["failed"] == raw["failed"]
            assert data["uptime"]["24h"] == round(
                (raw["total"] - raw["failed"]) * 100 / raw["total"], 3
            )
            rt = data["response_times"]
            assert rt["min"] == min(raw["rts"]) and rt["max"] == max(raw["rts"])
            assert rt["avg"] == math.floor(sum(raw["rts"]) / len(raw["rts"]) + 0.5)
            exact = nearest_rank(raw["rts"], 0.95)
            assert abs(rt["p95"] - exact) <= 0.02 * exact
            series = {
                int(datetime.fromisoformat(p["start"]).timestamp()): (p["checks"], p["failed"])
                for p in data["series"]
            }
            assert {k: v for k, v in series.items() if v[0]} == raw["buckets"]
