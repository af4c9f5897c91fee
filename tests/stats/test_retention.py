"""Retention removes exactly what has outlived its period, and nothing the stats need."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.stats.conftest import Run, every
from uptime_server.engine.housekeeping import Housekeeping
from uptime_server.models import CheckRun, Rollup
from uptime_server.stats import retention
from uptime_server.stats.figures import monitor_stats
from uptime_server.stats.rollups import DAY, FIVE_MIN, HOUR

NOW = datetime(2026, 11, 22, 12, 2, 30, tzinfo=UTC)  # not on a 5-minute boundary


def epoch(dt: datetime) -> int:
    return int(dt.timestamp())


def rollup_buckets(monitor_id: int, res: int) -> set[int]:
    rows = Rollup.select(Rollup.bucket).where(
        (Rollup.monitor == monitor_id) & (Rollup.resolution == res)
    )
    return {r.bucket for r in rows}


def test_raw_runs_go_after_the_retention_days_to_the_microsecond(
    alice, new_monitor, feeder, settings
):
    m = new_monitor(alice)
    cutoff = NOW - timedelta(days=settings.raw_retention_days)
    feeder.feed(
        m,
        [
            Run(cutoff - timedelta(days=3)),
            Run(cutoff - timedelta(microseconds=1)),
            Run(cutoff),
            Run(cutoff + timedelta(seconds=1)),
            Run(NOW),
        ],
    )
    counts = retention.run(NOW, settings)
    assert counts["check_runs"] == 2
    left = sorted(r.checked_at for r in CheckRun.select())
    assert left == [cutoff, cutoff + timedelta(seconds=1), NOW]


def test_the_raw_retention_setting_is_honoured_in_small_batches(
    alice, new_monitor, feeder, settings
):
    m, other = new_monitor(alice), new_monitor(alice, "other")
    times = every(NOW - timedelta(days=9), NOW, timedelta(hours=6))
    feeder.feed(m, [Run(t) for t in times])
    feeder.feed(other, [Run(t) for t in times])
    short = settings.with_overrides(raw_retention_days=7)
    old = sum(1 for t in times if t < NOW - timedelta(days=7))
    counts = retention.run(NOW, short, batch_size=3)
    assert counts["check_runs"] == 2 * old
    for monitor in (m, other):
        kept = [r.checked_at for r in CheckRun.select().where(CheckRun.monitor == monitor.id)]
        assert min(kept) >= NOW - timedelta(days=7)
        assert len(kept) == len(times) - old


def test_roll_ups_go_when_their_whole_bucket_is_past_retention(
    alice, new_monitor, feeder, settings
):
    m = new_monitor(alice)
    five_cut = epoch(NOW) - 30 * DAY  # 2026-10-23T12:02:30
    hour_cut = epoch(NOW) - 365 * DAY
    moments = [
        five_cut - FIVE_MIN - 150,  # bucket ends before the cut: goes
        five_cut - 1,  # bucket 12:00-12:05 reaches past the cut: stays
        hour_cut - HOUR - 150,  # hourly bucket ends before the cut: goes
        hour_cut - 1,  # hourly bucket reaches past the cut: stays
        epoch(NOW) - 3 * 365 * DAY,  # daily rows stay for ever
    ]
    feeder.feed(m, [Run(datetime.fromtimestamp(t, UTC)) for t in moments])
    before = {res: rollup_buckets(m.id, res) for res in (FIVE_MIN, HOUR, DAY)}
    counts = retention.run(NOW, settings, batch_size=2)
    after = {res: rollup_buckets(m.id, res) for res in (FIVE_MIN, HOUR, DAY)}
    assert after[DAY] == before[DAY] and len(after[DAY]) == 3  # three distinct days
    assert after[FIVE_MIN] == {t // FIVE_MIN * FIVE_MIN for t in moments[1:2]}
    assert after[HOUR] == {t // HOUR * HOUR for t in moments[1:2] + moments[3:4]} | {
        moments[0] // HOUR * HOUR
    }
    assert counts["rollups_5m"] == 4 and counts["rollups_1h"] == 2


def test_after_retention_every_period_reads_the_same(alice, new_monitor, feeder, settings):
    m = new_monitor(alice)
    month = NOW - timedelta(days=30)
    times = sorted(
        set(every(NOW - timedelta(days=400), NOW, timedelta(days=1, hours=3, minutes=7)))
        | set(every(month - timedelta(hours=3), month + timedelta(hours=3), timedelta(minutes=9)))
        | set(every(NOW - timedelta(days=2), NOW, timedelta(minutes=13)))
    )
    runs = [
        Run(t, passed=i % 9 != 0, rt=80 + (i * 37) % 400, retried=i % 13 == 0)
        for i, t in enumerate(times)
    ]
    feeder.feed(m, runs)
    grid = [(p, g) for p in ("24h", "7d", "30d") for g in ("1h", "1d")] + [("90d", "1d")]
    before = {pg: monitor_stats(m.id, *pg, NOW) for pg in grid}
    counts = retention.run(NOW, settings, batch_size=50)
    assert counts["check_runs"] > 0 and counts["rollups_5m"] > 0 and counts["rollups_1h"] > 0
    assert {pg: monitor_stats(m.id, *pg, NOW) for pg in grid} == before
    assert retention.run(NOW, settings) == {"check_runs": 0, "rollups_5m": 0, "rollups_1h": 0}


def test_it_runs_as_a_housekeeping_job(alice, new_monitor, feeder, settings, clock):
    m = new_monitor(alice)
    feeder.feed(m, [Run(clock.now() - timedelta(days=40)), Run(clock.now())])
    fed_at = clock.now()
    keeper = Housekeeping(clock)
    retention.register(keeper, settings)
    keeper.loop(clock.advance(3599))
    assert CheckRun.select().count() == 2  # not due for the first hour
    keeper.loop(clock.advance(1))
    assert keeper.runs == {"retention": 1}
    assert [r.checked_at for r in CheckRun.select()] == [fed_at]
