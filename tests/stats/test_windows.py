"""Windows, roll-up ranges and histograms: the arithmetic under the stats."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime

import pytest

from tests.stats.conftest import nearest_rank
from uptime_server.stats.figures import bucket_count, default_granularity, window
from uptime_server.stats.rollups import (
    DAY,
    FIVE_MIN,
    HOUR,
    Aggregate,
    RunSample,
    aggregate,
    cover,
    hist_index,
    percentile,
)

NOW = datetime(2026, 11, 22, 12, 3, 17, 500000, tzinfo=UTC)


def epoch(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def test_a_window_starts_on_the_5_minutes_before_now_minus_the_period():
    w = window(86400, NOW)
    assert w.start == epoch("2026-11-21T12:00:00")
    assert w.end == epoch("2026-11-22T12:05:00")  # the bucket holding now
    assert window(30 * DAY, NOW).start == epoch("2026-10-23T12:00:00")


def test_a_90_day_window_starts_on_the_hour():
    # 5-minute roll-ups are gone after 30 days: only hourly rows reach back.
    assert window(90 * DAY, datetime(2026, 11, 22, 12, 58, tzinfo=UTC)).start == epoch(
        "2026-08-24T12:00:00"
    )


def test_bucket_counts_and_the_default_granularity():
    assert bucket_count("24h", "5m") == 289
    assert bucket_count("7d", "5m") == 2017
    assert bucket_count("90d", "1h") == 2161
    assert default_granularity("30d") == "1h"
    assert default_granularity("90d") == "1d"


def buckets_of(ranges):
    return [(res, b) for res, lo, hi in ranges for b in range(lo, hi, res)]


@pytest.mark.parametrize("seed", range(20))
def test_cover_partitions_the_window_with_few_coarse_rows(seed):
    rng = random.Random(seed)
    end = epoch("2026-11-22T12:05:00") - rng.randrange(0, 2000) * FIVE_MIN
    start = end - rng.randrange(1, 90 * 288) * FIVE_MIN
    ranges = cover(start, end)
    spans = sorted((b, b + res) for res, b in buckets_of(ranges))
    assert spans[0][0] == start and spans[-1][1] == end
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert len(ranges) <= 5
    per_res = {r: sum(1 for res, _ in buckets_of(ranges) if res == r) for r in (300, 3600)}
    assert per_res[FIVE_MIN] <= 2 * 11 and per_res[HOUR] <= 2 * 23


def test_cover_keeps_rows_inside_series_buckets():
    start, end = epoch("2026-11-21T12:35:00"), epoch("2026-11-22T12:05:00")
    ranges = cover(start, end, max_res=HOUR)
    assert {res for res, _, _ in ranges} == {FIVE_MIN, HOUR}
    with pytest.raises(ValueError):
        cover(start + 1, end)


def test_histogram_quantiles_are_within_2_percent():
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randrange(1, 3000)
        scale = rng.choice([3, 40, 150, 2000, 60000])
        values = [max(0, int(rng.lognormvariate(math.log(scale), 1.0))) for _ in range(n)]
        hist: dict[int, int] = {}
        for v in values:
            hist[hist_index(v)] = hist.get(hist_index(v), 0) + 1
        for q in (0.5, 0.95, 0.99):
            exact = nearest_rank(values, q)
            assert abs(percentile(hist, q) - exact) <= 0.02 * exact, (trial, q, exact)


def test_small_values_come_back_exactly():
    for ms in range(0, 50):
        assert percentile({hist_index(ms): 1}, 0.95) == ms


def test_merging_cells_equals_adding_runs_to_one():
    rng = random.Random(3)
    samples = [
        RunSample(1, 1_700_000_000 + i * 37, rng.random() > 0.1, rng.randrange(1, 900))
        for i in range(2000)
    ]
    cells = aggregate(samples)
    merged = Aggregate()
    for (_, res, _), cell in cells.items():
        if res == FIVE_MIN:
            merged.merge(cell)
    whole = Aggregate()
    for s in samples:
        whole.add_run(s.passed, s.response_time)
    assert merged == whole
    daily = [c for (_, res, _), c in cells.items() if res == DAY]
    assert sum(c.checks for c in daily) == 2000
