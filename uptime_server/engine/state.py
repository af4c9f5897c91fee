"""Pure status logic: (previous state, run result, now) → (new state, events).

No database, no clock: everything this module decides is a function of its
arguments, so every transition is unit-testable (docs/api.md#statuses,
#notification-life-cycle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

CERT_WARNING_WINDOW = timedelta(days=14)


@dataclass(frozen=True)
class RunFacts:
    """What one check run in one location found (from the probe)."""

    passed: bool
    retried: bool = False
    response_time: int | None = None
    cert_expires_at: datetime | None = None
    is_https: bool = False


def run_status(facts: RunFacts, *, degraded_ms: int | None, now: datetime) -> str:
    """The status a single run earns: online, warning or offline."""
    if not facts.passed:
        return "offline"
    if facts.retried:
        return "warning"
    if degraded_ms is not None and (facts.response_time or 0) > degraded_ms:
        return "warning"
    if (
        facts.is_https
        and facts.cert_expires_at is not None
        and facts.cert_expires_at - now <= CERT_WARNING_WINDOW
    ):
        return "warning"
    return "online"


def combine(statuses: list[str]) -> str:
    """Monitor status from the latest run status of each location.

    Locations with no run yet are ignored; with none at all it stays pending.
    """
    if not statuses:
        return "pending"
    if all(s == "offline" for s in statuses):
        return "offline"
    if all(s == "online" for s in statuses):
        return "online"
    return "warning"


@dataclass(frozen=True)
class MonitorState:
    """The part of a monitor's stored state that transitions read."""

    status: str
    consecutive_failures: int
    alerts_suppressed: bool
    has_active_incident: bool
    location_statuses: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Transition:
    status: str
    consecutive_failures: int
    alerts_suppressed: bool
    location_statuses: dict[str, str]
    open_incident: bool = False
    resolve_incident: bool = False

    @property
    def passed(self) -> bool:
        return self.status in ("online", "warning")


def transition(
    prev: MonitorState,
    *,
    location: str,
    status: str,
    locations: list[str],
    alert_threshold: int,
) -> Transition:
    """Apply one location's run status to the monitor's state.

    - The monitor is offline when every location that has reported is offline.
    - A downtime incident opens after ``alert_threshold`` consecutive offline
      evaluations, at most one at a time, and not while alerts are suppressed
      (a notification resolved by hand while still failing).
    - The first evaluation that is not offline resolves an open incident and
      lifts the suppression.
    """
    latest = {loc: s for loc, s in prev.location_statuses.items() if loc in locations}
    latest[location] = status
    new_status = combine([latest[loc] for loc in locations if loc in latest])
    if new_status == "offline":
        failures = prev.consecutive_failures + 1
        opens = (
            failures >= alert_threshold
            and not prev.has_active_incident
            and not prev.alerts_suppressed
        )
        return Transition(
            status=new_status,
            consecutive_failures=failures,
            alerts_suppressed=prev.alerts_suppressed,
            location_statuses=latest,
            open_incident=opens,
        )
    return Transition(
        status=new_status,
        consecutive_failures=0,
        alerts_suppressed=False,
        location_statuses=latest,
        resolve_incident=prev.has_active_incident,
    )
