"""The benchmark's bulk path leaves the same rows as the real writer."""

from __future__ import annotations

from bench import bench_stats
from uptime_server.models import CheckRun, Notification, Rollup

DAY = 86400


def rows_of(monitor_id: int) -> dict[str, list[tuple]]:
    rollups = (
        Rollup.select()
        .where(Rollup.monitor == monitor_id)
        .order_by(Rollup.resolution, Rollup.bucket)
    )
    runs = CheckRun.select().where(CheckRun.monitor == monitor_id).order_by(CheckRun.checked_at)
    notes = (
        Notification.select()
        .where(Notification.monitor == monitor_id)
        .order_by(Notification.started_at, Notification.type)
    )
    return {
        "rollups": [
            (r.resolution, r.bucket, r.checks, r.failed, r.rt_count, r.rt_sum)
            + (r.rt_min, r.rt_max, r.p95, r.hist)
            for r in rollups
        ],
        "runs": [
            (r.checked_at, r.status, r.response_time, r.status_code, r.error, r.attempts)
            for r in runs
        ],
        "notifications": [
            (n.type, n.status, n.started_at, n.resolved_at, n.duration) for n in notes
        ],
    }


def test_bulk_rows_equal_the_writers_rows(alice, new_monitor, feeder, settings, clock):
    real, bulk = new_monitor(alice, "real"), new_monitor(alice, "bulk")
    end = int(clock.now().timestamp()) // DAY * DAY
    # Six hours before midnight; seed 6 has an outage of 12 checks in them.
    items = bench_stats.samples(6, end - 6 * 3600, end)
    assert sum(not passed for _, passed, _ in items) == 12
    bench_stats.real_feed(settings, real, items)
    bench_stats.bulk_feed(bulk, items)
    got, want = rows_of(bulk.id), rows_of(real.id)
    assert len(want["rollups"]) == 72 + 6 + 1
    assert len(want["runs"]) == len(items)
    assert got["rollups"] == want["rollups"]
    assert got["runs"] == want["runs"]
    assert got["notifications"] == want["notifications"] != []
