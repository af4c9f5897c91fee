"""What the recorder takes and gives back, and what it decides in between.

``CheckOutcome`` is the recorder's input (from the scheduler, the API's
"test now" and, pickled, across to the database worker); ``Recorded`` is what
it reports per outcome; ``Plan`` is its decision for one outcome, made in
memory by ``recorder`` and written set-wise by ``recorder_sql``. Both of those
modules use all three, so they live here, apart from either.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uptime_server.checks.cert_alerts import CertDecision, SeenCert
    from uptime_server.checks.state import MonitorState, Transition
    from uptime_server.checks.types import RunResult


@dataclass(frozen=True)
class CheckOutcome:
    """One finished check run in one location, as the runner hands it over.

    ``monitor_id`` and ``monitor_created_at`` together name the monitor that
    was checked: should that monitor be deleted while its check runs and its
    id ever reach another monitor, the outcome still names only the old one.
    """

    monitor_id: int
    monitor_created_at: datetime
    location: str
    checked_at: datetime
    passed: bool
    response_time: int | None
    status_code: int | None
    error: str | None
    attempts: int = 1
    retried: bool = False
    cert_expires_at: datetime | None = None
    cert_serial: str | None = None  # with cert_expires_at, the certificate seen
    # Scheduling: the next due time and the lease to release (None for an
    # ad-hoc "test now" run, which leaves the schedule alone).
    next_check_at: datetime | None = None
    lease_owner: str | None = None
    # Recorded only while the monitor's state_version is still this (a
    # verdict drawn from the stored state; RunResult.expect_version).
    expect_version: int | None = None
    # A ping of a heartbeat monitor (``engine.ping_sink``); None for a check.
    ping: PingFacts | None = None
    # False: a failure seen while the probe agent's own uplink failed (its
    # connectivity canary, docs/agents.md). Recorded as a history run marked
    # uncounted; it moves the schedule on but changes no location status,
    # state, alert or roll-up. Anything judging statuses reads counted runs only.
    counted: bool = True

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to the database worker) as the class and its values in field
        # order: a dataclass's default pickling, field by field through its
        # __dict__, cost the sending process more than building the outcome.
        return CheckOutcome, _outcome_values(self)

    @property
    def history_only(self) -> bool:
        """A history entry that changes no state and counts in no figure (start, log)."""
        return self.ping is not None and self.ping.kind in HISTORY_ONLY_KINDS

    @classmethod
    def from_run(
        cls,
        result: RunResult,
        *,
        monitor_id: int,
        monitor_created_at: datetime,
        location: str,
        checked_at: datetime,
        next_check_at: datetime | None = None,
        lease_owner: str | None = None,
    ) -> CheckOutcome:
        """The outcome of a probe's run (without a schedule: an ad-hoc run)."""
        return cls(
            monitor_id=monitor_id,
            monitor_created_at=monitor_created_at,
            location=location,
            checked_at=checked_at,
            passed=result.passed,
            response_time=result.response_time,
            status_code=result.status_code,
            error=result.error,
            attempts=result.attempts,
            retried=result.retried,
            cert_expires_at=result.cert_expires_at,
            cert_serial=result.cert_serial,
            next_check_at=next_check_at,
            lease_owner=lease_owner,
            expect_version=result.expect_version,
        )


# What each ping kind does: success/fail/exit finish a run (and close an open
# start), start opens one, log only leaves a history entry.
PING_KINDS = ("success", "start", "fail", "exit", "log")
HISTORY_ONLY_KINDS = ("start", "log")


@dataclass(frozen=True)
class PingFacts:
    """What a ping carried, kept with its history entry."""

    kind: str  # one of PING_KINDS
    exit_code: int | None = None
    message: str | None = None
    source_ip: str | None = None
    user_agent: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return PingFacts, _ping_values(self)

    @property
    def run_started_at_change(self) -> bool:
        """Whether this ping sets (start) or clears (a finishing ping) the open start."""
        return self.kind != "log"


_outcome_values = attrgetter(*(f.name for f in fields(CheckOutcome)))
_ping_values = attrgetter(*(f.name for f in fields(PingFacts)))


@dataclass
class Recorded:
    """What the recorder did with one outcome (``skipped`` says why it wrote nothing)."""

    monitor_id: int
    run_id: int | None = None
    run_status: str | None = None
    monitor_status: str | None = None
    opened: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    # Suppressed downtimes whose alert this run sent (their ancestor recovered).
    released: list[int] = field(default_factory=list)
    skipped: str | None = None


@dataclass
class Plan:
    """What the recorder decided for one outcome.

    With a ``transition``, the monitor's new ``state`` (the transition's,
    with this run's figures and certificate), written guarded by the
    ``version`` it was read at. With a ``cert`` decision, the certificate this
    run saw (``seen_cert``) and what that means for its expiry alerts
    (checks/cert_alerts.py).
    """

    outcome: CheckOutcome
    done: Recorded
    record_run: bool = False
    push_forward: bool = False
    transition: Transition | None = None
    state: MonitorState | None = None
    version: int = 0
    seen_cert: SeenCert | None = None
    cert: CertDecision | None = None
    flapping_began: datetime | None = None  # the monitor's flapping_since before this run
    # Checked while a maintenance window covered the monitor: no alert, and
    # the run is left out of the roll-ups (neither up nor down).
    in_maintenance: bool = False

    @property
    def status(self) -> str | None:
        return self.transition.status if self.transition is not None else None

    @property
    def opens(self) -> bool:
        return self.transition is not None and self.transition.open_incident

    @property
    def resolves(self) -> bool:
        return self.transition is not None and self.transition.resolve_incident

    @property
    def cert_event(self) -> bool:
        """Does this run alert a certificate threshold, or see a renewed certificate?"""
        return self.cert is not None and (self.cert.alert_days is not None or self.cert.renewed)

    @property
    def has_events(self) -> bool:
        """Whether this run writes notifications (an incident, flapping)."""
        tr = self.transition
        return tr is not None and (
            tr.open_incident or tr.resolve_incident or tr.flapping_started or tr.flapping_settled
        )
