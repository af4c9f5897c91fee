"""Known check runs fed through the real writer (Recorder) at chosen times."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from tests.outcomes import outcome_at
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors


@dataclass(frozen=True)
class Run:
    """One check run to feed: when, whether it passed, its response time."""

    at: datetime
    passed: bool = True
    rt: int | None = 120
    retried: bool = False  # a pass after a retry: status warning


def outcome_of(monitor: Monitor, run: Run) -> CheckOutcome:
    return outcome_at(
        monitor,
        run.at,
        run.passed,
        response_time=run.rt if run.passed else None,
        attempts=2 if run.retried else 1,
        retried=run.retried,
    )


@dataclass
class Feeder:
    recorder: Recorder

    def feed(self, monitor: Monitor, runs: Iterable[Run], batch: int = 200) -> None:
        """Record *runs* in time order, in batches, as the engine would."""
        ordered = sorted(runs, key=lambda r: r.at)
        for i in range(0, len(ordered), batch):
            chunk = ordered[i : i + batch]
            self.recorder.record([outcome_of(monitor, r) for r in chunk], now=chunk[-1].at)


@pytest.fixture
def feeder(db, settings) -> Feeder:
    return Feeder(Recorder(settings))


@pytest.fixture
def new_monitor(db, settings, clock):
    def make(owner, name: str = "api-prod") -> Monitor:
        cfg = MonitorConfig.model_validate(
            {"name": name, "url": "http://127.0.0.1:9/", "type": "http"},
            context={"settings": settings},
        )
        return monitors.create_monitor(owner.acting, cfg, now=clock.now(), settings=settings)

    return make


def every(start: datetime, end: datetime, step: timedelta) -> list[datetime]:
    """Times from *start* (inclusive) to *end* (exclusive) every *step*."""
    out, t = [], start
    while t < end:
        out.append(t)
        t += step
    return out


def nearest_rank(values: list[int], q: float) -> int:
    """The exact nearest-rank quantile, the figure p95 approximates."""
    import math

    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]
