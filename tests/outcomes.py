"""Synthetic check outcomes, for tests about what follows a check rather than the probing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.clock import ManualClock
from uptime_server.models import Monitor

FAILED_503 = "expected status in [200], got 503"


def outcome_at(monitor: Monitor, at: datetime, passed: bool, **kw: Any) -> CheckOutcome:
    """A check of *monitor* at *at*: a 200 in 120 ms or a 503 in 45 ms; *kw* overrides fields."""
    values: dict[str, Any] = dict(
        monitor_id=monitor.id,
        monitor_created_at=monitor.created_at,
        location="local",
        checked_at=at,
        passed=passed,
        response_time=120 if passed else 45,
        status_code=200 if passed else 503,
        error=None if passed else FAILED_503,
    )
    values.update(kw)
    return CheckOutcome(**values)


def outcome(monitor: Monitor, clock: ManualClock, passed: bool, **kw: Any) -> CheckOutcome:
    """The same, checked at the clock's now."""
    return outcome_at(monitor, clock.now(), passed, **kw)
