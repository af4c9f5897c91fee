"""Pure status logic: (previous state, run result, now) → (new state, events).

No database, no clock: everything this module decides is a function of its
arguments, so every transition is unit-testable (docs/api.md#statuses,
#notification-life-cycle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from uptime_server.engine import quorum

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


@dataclass(frozen=True)
class AlertRules:
    """A monitor's alert settings that transitions read (docs/alerts.md)."""

    alert_threshold: int = 1
    recovery_threshold: int = 1
    flap_threshold: int | None = None  # None: no flap detection
    flap_window: int = 3600  # seconds
    min_failed_locations: int | None = None  # None: a majority of the locations


@dataclass(frozen=True)
class MonitorState:
    """The part of a monitor's stored state that transitions read."""

    status: str
    consecutive_failures: int
    alerts_suppressed: bool
    has_active_incident: bool
    location_statuses: dict[str, str] = field(default_factory=dict)
    consecutive_successes: int = 0
    # Epoch seconds of the latest up/down changes (oldest first).
    state_changes: tuple[int, ...] = ()
    flapping_since: datetime | None = None
    # When each location's status in location_statuses was checked (a
    # location missing here counts as fresh), and the locations that have
    # reported in the open round (engine/quorum.py).
    location_checked_at: dict[str, datetime] = field(default_factory=dict)
    round_locations: tuple[str, ...] = ()
    round_started_at: datetime | None = None


@dataclass(frozen=True)
class Transition:
    status: str
    consecutive_failures: int
    alerts_suppressed: bool
    location_statuses: dict[str, str]
    open_incident: bool = False
    resolve_incident: bool = False
    consecutive_successes: int = 0
    state_changes: tuple[int, ...] = ()
    flapping_since: datetime | None = None
    flapping_started: bool = False
    flapping_settled: bool = False
    # The round after this run: still open (the status above is the one
    # before the run) or closed (the status is the round's), which locations
    # have reported in it since when, and which were left out as stale.
    round_closed: bool = True
    round_locations: tuple[str, ...] = ()
    round_started_at: datetime | None = None
    stale_locations: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status in ("online", "warning")


def transition(
    prev: MonitorState,
    *,
    location: str,
    status: str,
    locations: list[str],
    alert_threshold: int = 1,
    rules: AlertRules | None = None,
    at: datetime | None = None,
    in_maintenance: bool = False,
    interval: int | None = None,
) -> Transition:
    """Apply one location's run status (checked *at*) to the monitor's state.

    - The run replaces its location's latest status. The monitor is evaluated
      per round (engine/quorum.py): only the run that closes a round moves
      the status, the counters and the alerts below; until then they stay as
      they were. A round closes once every fresh location (latest run no
      older than 1.5 × *interval* at *at*) has reported in it, and every
      location with no run yet, until the round is 1.5 × *interval* old;
      with one location, at every run.
    - The round's status: at least ``min_failed_locations`` (default a
      majority) fresh locations offline → offline; some but fewer → warning;
      none → online, or warning if any location is.
    - A downtime incident opens after ``alert_threshold`` consecutive offline
      rounds, at most one at a time, and not while alerts are suppressed
      (a notification resolved by hand while still failing).
    - An offline monitor comes back after ``recovery_threshold`` consecutive
      rounds that are not offline; until then it stays offline. Coming
      back resolves an open incident and lifts the suppression.
    - Flapping: more than ``flap_threshold`` up/down changes within
      ``flap_window`` seconds starts it; it settles once the changes within
      the window are down to ``flap_threshold // 2`` or fewer. While it
      flaps, no incident opens or resolves (the alerts are held); the
      evaluation that settles it applies the rules above as usual.

    - In maintenance (``in_maintenance``, docs/maintenance.md): the status
      and counters move on as usual, but no incident opens or resolves and
      the change is not counted for flapping. The first evaluation after the
      window applies the rules above to what the counters say then: a
      monitor still failing opens its incident; one whose incident was open
      before the window keeps it (no second one).

    *rules* (else ``AlertRules(alert_threshold)``), *at* (needed for flap
    detection and freshness) and *interval* (seconds; None: every reported
    location is fresh) come from the caller: nothing here reads a clock.
    """
    rules = rules or AlertRules(alert_threshold=alert_threshold)
    latest = {loc: s for loc, s in prev.location_statuses.items() if loc in locations}
    latest[location] = status
    checked = {loc: t for loc, t in prev.location_checked_at.items() if loc in latest}
    if at is not None:
        checked[location] = at
    else:
        checked.pop(location, None)
    reports = {loc: quorum.LocationReport(s, checked.get(loc)) for loc, s in latest.items()}
    round_ = quorum.advance(
        reports,
        locations,
        prev.round_locations,
        location=location,
        now=at,
        interval=interval,
        round_started_at=prev.round_started_at,
    )
    if not round_.closed:
        return _round_open(prev, latest, round_)
    combined = round_.status(quorum.min_failed(rules.min_failed_locations, len(locations)))
    if combined == "offline":
        new_status, failures, successes = combined, prev.consecutive_failures + 1, 0
        suppressed = prev.alerts_suppressed
    elif prev.status == "offline" and prev.consecutive_successes + 1 < rules.recovery_threshold:
        # Held offline: the recovery has not lasted long enough yet.
        new_status, failures = "offline", prev.consecutive_failures
        successes, suppressed = prev.consecutive_successes + 1, prev.alerts_suppressed
    else:
        new_status, failures, successes, suppressed = combined, 0, 0, False
    if in_maintenance:  # no flip counted, flapping neither starts nor settles
        changes, flapping_since = prev.state_changes, prev.flapping_since
        started = settled = False
    else:
        changes, flapping_since, started, settled = _flapping(prev, new_status, rules, at)
    held = flapping_since is not None or in_maintenance
    opens = (
        new_status == "offline"
        and failures >= rules.alert_threshold
        and not prev.has_active_incident
        and not suppressed
    )
    resolves = new_status != "offline" and prev.has_active_incident
    return Transition(
        status=new_status,
        consecutive_failures=failures,
        alerts_suppressed=suppressed,
        location_statuses=latest,
        open_incident=opens and not held,
        resolve_incident=resolves and not held,
        consecutive_successes=successes,
        state_changes=changes,
        flapping_since=flapping_since,
        flapping_started=started,
        flapping_settled=settled,
        round_closed=True,
        round_locations=(),
        stale_locations=round_.stale,
    )


def _round_open(
    prev: MonitorState,
    latest: dict[str, str],
    round_: quorum.Round,
) -> Transition:
    """The state after a run that leaves the round open: only its location moves."""
    return Transition(
        status=prev.status,
        consecutive_failures=prev.consecutive_failures,
        alerts_suppressed=prev.alerts_suppressed,
        location_statuses=latest,
        consecutive_successes=prev.consecutive_successes,
        state_changes=prev.state_changes,
        flapping_since=prev.flapping_since,
        round_closed=False,
        round_locations=round_.reported,
        round_started_at=round_.started_at,
        stale_locations=round_.stale,
    )


def _flapping(
    prev: MonitorState, new_status: str, rules: AlertRules, at: datetime | None
) -> tuple[tuple[int, ...], datetime | None, bool, bool]:
    """(recent changes, flapping since, started now, settled now)."""
    was_flapping = prev.flapping_since is not None
    threshold = rules.flap_threshold
    if threshold is None or at is None:
        # Detection off (or turned off while flapping: that settles it).
        return (), None, False, was_flapping
    now = int(at.timestamp())
    changes = [t for t in prev.state_changes if t > now - rules.flap_window]
    if prev.status != "pending" and (prev.status == "offline") != (new_status == "offline"):
        changes.append(now)
    changes = changes[-(threshold + 1) :]
    if was_flapping:
        if len(changes) <= threshold // 2:
            return tuple(changes), None, False, True
        return tuple(changes), prev.flapping_since, False, False
    if len(changes) > threshold:
        return tuple(changes), at, True, False
    return tuple(changes), None, False, False
