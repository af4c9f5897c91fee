"""Pure status logic: (previous state, run result, now) → (new state, events).

No database, no clock: everything this module decides is a function of its
arguments, so every transition is unit-testable (docs/api.md#statuses,
#notification-life-cycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from operator import attrgetter
from typing import Any

from uptime_server.checks import quorum

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
    """A monitor's recorded state: the columns of ``monitors`` every run reads and writes back.

    Each field is the column of the same name. The recorder's read of a
    batch, its write-back and their SQL are built from these fields
    (engine/recorder_sql.py; tests/engine/test_state_columns.py), so a new
    state column is a field here, a migration, and the rule that moves it.
    """

    status: str = "pending"
    consecutive_failures: int = 0
    # Passing rounds in a row while held offline by recovery_threshold.
    consecutive_successes: int = 0
    # A downtime notification resolved by hand while still failing: no new
    # incident until the monitor has recovered.
    alerts_suppressed: bool = False
    # Start of the current offline streak: the downtime's started_at.
    offline_since: datetime | None = None
    # Epoch seconds of the latest up/down changes (oldest first).
    state_changes: tuple[int, ...] = ()
    flapping_since: datetime | None = None
    # The locations that have reported in the open round, and since when
    # (checks/quorum.py).
    round_locations: tuple[str, ...] = ()
    round_started_at: datetime | None = None
    # The latest run, as the recorder sets it: when, what it measured, and the
    # last passing and failing runs' times (each kept while the other moves).
    last_check: datetime | None = None
    last_success: datetime | None = None
    last_failure: datetime | None = None
    response_time: int | None = None
    status_code: int | None = None
    last_error: str | None = None
    # The certificate last seen and the smallest expiry threshold already
    # alerted for it (checks/cert_alerts.py, applied by the recorder).
    cert_expires_at: datetime | None = None
    cert_serial: str | None = None
    cert_alerted_days: int | None = None


_STATE_FIELDS = tuple(f.name for f in fields(MonitorState))
_STATE_INDEX = {name: i for i, name in enumerate(_STATE_FIELDS)}
_state_values = attrgetter(*_STATE_FIELDS)


def moved(prev: MonitorState, **changes: Any) -> MonitorState:
    """*prev* with *changes*: ``dataclasses.replace`` without its walk of the fields.

    The recorder moves a state twice per recorded check, where ``replace``
    cost more than the rest of the state logic
    (bench/README.md#monitor-state-dataclass-issue-30).
    """
    values = list(_state_values(prev))
    for name, value in changes.items():
        values[_STATE_INDEX[name]] = value
    return MonitorState(*values)


@dataclass(frozen=True)
class Transition:
    """What one run does: the monitor's next state, and the events it raises.

    The round after the run is still open (``state`` keeps the status from
    before the run) or closed (the status is the round's); ``stale_locations``
    were left out of it as stale.
    """

    state: MonitorState
    location_statuses: dict[str, str]
    open_incident: bool = False
    resolve_incident: bool = False
    flapping_started: bool = False
    flapping_settled: bool = False
    round_closed: bool = True
    stale_locations: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        return self.state.status

    @property
    def passed(self) -> bool:
        return self.state.status in ("online", "warning")


def transition(
    prev: MonitorState,
    *,
    location: str,
    status: str,
    locations: list[str],
    has_active_incident: bool = False,
    location_statuses: Mapping[str, str] | None = None,
    location_checked_at: Mapping[str, datetime] | None = None,
    alert_threshold: int = 1,
    rules: AlertRules | None = None,
    at: datetime | None = None,
    in_maintenance: bool = False,
    interval: int | None = None,
) -> Transition:
    """Apply one location's run status (checked *at*) to the monitor's state.

    - The run replaces its location's latest status (*location_statuses*,
      checked at *location_checked_at*: a location missing there counts as
      fresh). The monitor is evaluated per round (checks/quorum.py): only the
      run that closes a round moves the status, the counters and the alerts
      below; until then they stay as they were. A round closes once every
      fresh location (latest run no older than 1.5 × *interval* at *at*) has
      reported in it, and every location with no run yet, until the round is
      1.5 × *interval* old; with one location, at every run.
    - The round's status: at least ``min_failed_locations`` (default a
      majority) fresh locations offline → offline; some but fewer → warning;
      none → online, or warning if any location is.
    - A downtime incident opens after ``alert_threshold`` consecutive offline
      rounds, at most one at a time (*has_active_incident*: one is open), and
      not while alerts are suppressed (a notification resolved by hand while
      still failing).
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
    - ``offline_since``: while offline, when the offline streak began (kept
      from *prev*, else *at*). Failing in maintenance with no incident open
      leaves it unset: a downtime that opens after the window starts when it
      opens, not in the window.

    The state's other fields (the run's own figures, the certificate) are
    carried from *prev*: the recorder sets them. *rules* (else
    ``AlertRules(alert_threshold)``), *at* (needed for flap detection and
    freshness) and *interval* (seconds; None: every reported location is
    fresh) come from the caller: nothing here reads a clock.
    """
    rules = rules or AlertRules(alert_threshold=alert_threshold)
    latest = {loc: s for loc, s in (location_statuses or {}).items() if loc in locations}
    latest[location] = status
    checked = {loc: t for loc, t in (location_checked_at or {}).items() if loc in latest}
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
        # Only the run's location moves: the status and counters are the
        # round's, decided when it closes.
        return Transition(
            moved(
                prev,
                offline_since=_offline_since(
                    prev, prev.status, has_active_incident, in_maintenance, at
                ),
                round_locations=round_.reported,
                round_started_at=round_.started_at,
            ),
            latest,
            round_closed=False,
            stale_locations=round_.stale,
        )
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
        and not has_active_incident
        and not suppressed
    )
    resolves = new_status != "offline" and has_active_incident
    new = moved(
        prev,
        status=new_status,
        consecutive_failures=failures,
        consecutive_successes=successes,
        alerts_suppressed=suppressed,
        offline_since=_offline_since(prev, new_status, has_active_incident, in_maintenance, at),
        state_changes=changes,
        flapping_since=flapping_since,
        round_locations=(),
        round_started_at=None,
    )
    return Transition(
        new,
        latest,
        open_incident=opens and not held,
        resolve_incident=resolves and not held,
        flapping_started=started,
        flapping_settled=settled,
        round_closed=True,
        stale_locations=round_.stale,
    )


def _offline_since(
    prev: MonitorState,
    new_status: str,
    has_active_incident: bool,
    in_maintenance: bool,
    at: datetime | None,
) -> datetime | None:
    if new_status != "offline" or (in_maintenance and not has_active_incident):
        return None
    return prev.offline_since or at


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
