"""Status-page and badge fixtures: a history of check runs written by the real recorder.

History goes through ``Recorder`` (tests.stats.conftest.Feeder), so the
roll-ups and incidents the pages read are the ones the engine writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.stats.conftest import Feeder, Run
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor

DAYS = 90
RUN_HOURS = (3, 9, 15, 21)  # four runs a day, so today (12:00) has two


def day_start(now: datetime, days_ago: int) -> datetime:
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight - timedelta(days=days_ago)


def daily_runs(now: datetime, *, down: Iterable[int] = (), days: int = DAYS) -> list[Run]:
    """Four runs a day for *days* days up to *now*; the runs of the days *down* (days ago) fail."""
    down = set(down)
    runs = []
    for ago in range(days - 1, -1, -1):
        for hour in RUN_HOURS:
            at = day_start(now, ago) + timedelta(hours=hour)
            if at <= now:
                runs.append(Run(at, passed=ago not in down, rt=100 + hour))
    return runs


@pytest.fixture
def history(db: Any, settings: Any, clock: Any) -> Any:
    """``history(monitor, down=(3,))``: 90 days of runs for *monitor*, failing on those days."""
    feeder = Feeder(Recorder(settings))

    def seed(monitor: Monitor, *, down: Iterable[int] = (), days: int = DAYS) -> Monitor:
        feeder.feed(monitor, daily_runs(clock.now(), down=down, days=days), batch=400)
        return Monitor.get_by_id(monitor.id)

    return seed
