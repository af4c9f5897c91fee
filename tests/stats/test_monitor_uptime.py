"""uptime_24h/7d/30d on monitor objects and list items come from the same roll-ups."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from tests.stats.test_stats_api import DAY_RUNS, HISTORY
from uptime_server.stats.figures import monitor_stats, uptime_by_monitor


def test_monitor_objects_and_list_items_carry_uptime(alice, new_monitor, feeder):
    busy, quiet = new_monitor(alice, "busy"), new_monitor(alice, "quiet")
    feeder.feed(busy, HISTORY + DAY_RUNS)
    data = alice.get(f"/api/v1/monitors/{busy.id}").json["data"]
    assert (data["uptime_24h"], data["uptime_7d"], data["uptime_30d"]) == (71.429, 61.111, 68.182)
    data = alice.get(f"/api/v1/monitors/{quiet.id}").json["data"]
    assert (data["uptime_24h"], data["uptime_7d"], data["uptime_30d"]) == (None, None, None)
    items = alice.get("/api/v1/monitors").json["data"]
    assert [(i["name"], i["uptime_24h"]) for i in items] == [("busy", 71.429), ("quiet", None)]


@contextmanager
def queries_run() -> Iterator[list[tuple[str, tuple]]]:
    """Every statement peewee sends while the block runs."""
    seen: list[tuple[str, tuple]] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if isinstance(record.msg, tuple):
                seen.append(record.msg)

    logger, handler = logging.getLogger("peewee"), Catch(logging.DEBUG)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_every_roll_up_read_is_a_primary_key_range_scan(alice, new_monitor, feeder, db, clock):
    """The cost check: no statement walks a monitor's history or the table."""
    m = new_monitor(alice)
    feeder.feed(m, HISTORY + DAY_RUNS)
    now = clock.now() + timedelta(minutes=3, seconds=7)
    with queries_run() as seen:
        uptime_by_monitor([m.id, m.id + 1, m.id + 2], now)
        for period, granularity in [("24h", "5m"), ("7d", "1h"), ("30d", "1d"), ("90d", "1d")]:
            monitor_stats(m.id, period, granularity, now)
    reads = [(sql, params) for sql, params in seen if '"rollups"' in sql]
    assert len(reads) == 1 + 4 * 3  # uptime; per stats call: uptime, series, totals
    for sql, params in reads:
        plan = [row[3] for row in db.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]
        scans = [line for line in plan if line.startswith(("SEARCH", "SCAN"))]
        assert scans, plan
        for line in scans:
            assert line.startswith("SEARCH t") and line.endswith(
                "(monitor_id=? AND resolution=? AND bucket>? AND bucket<?)"
            ), plan
