"""The writer's transaction: runs, state, notifications, outbox, roll-ups.

``Recorder.record`` takes a batch of finished check runs and writes, in one
transaction: each raw run, the monitor's new state (conditional on its
``state_version``), any notification the transition opens or resolves with its
outbox rows, the scheduling row (due time, lease released) and the roll-ups.

It works set-wise, so a batch of hundreds of runs costs a handful of
statements: the batch's monitors are read (and locked) in one query, with
their location statuses, alert thresholds and active incidents; the state
logic runs in memory, run by run, in order; then the runs are inserted with
one multi-row INSERT and the monitor and schedule rows updated with one
``executemany`` each. Only runs that open or resolve an incident write their
notification and outbox rows one by one.

Dependencies (docs/alerts.md#dependencies): a batch that opens or resolves a
downtime, or holds a run of a monitor whose downtime is suppressed, reads
the dependency chains through those monitors with one more query, writes
its notifications ancestors first, opens a blocked monitor's downtime
suppressed (no outbox rows) and releases a suppressed one whose ancestors
are all up again. Any other batch reads nothing more.

A run whose claim's lease was lost (``lease_owner`` no longer holds the row:
it expired and another process took the check over) is refused: nothing of it
is written. A run whose state logic raises is logged and its monitor pushed forward (the
run is not recorded); it never takes the rest of the batch with it. The
monitor updates stay conditional on ``state_version``: with the rows locked
they always apply, and if they ever did not, the whole batch is rolled back
and retried rather than writing a transition computed from a stale state.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from peewee import IntegrityError

from uptime_server.checks import cert_alerts, state
from uptime_server.checks import dependencies as graph
from uptime_server.checks.outcomes import CheckOutcome, Plan, Recorded
from uptime_server.config import Settings
from uptime_server.db import database, retry_locked, write_tx
from uptime_server.engine.recorder_sql import Batch, BatchMonitor, Dependencies, versions_moved
from uptime_server.maintenance import windows as maintenance_windows
from uptime_server.models import (
    DEFAULT_CERT_EXPIRY_DAYS,
    AlertSettings,
    Monitor,
    Notification,
)
from uptime_server.notify import outbox
from uptime_server.notify.message import (
    AlertContent,
    cert_message,
    format_utc,
    notification_message,
)
from uptime_server.notify.noise import first_reminder
from uptime_server.stats import rollups

log = logging.getLogger(__name__)


# A monitor without an alert_settings row: the columns' defaults.
_DEFAULT_RULES = state.AlertRules(flap_threshold=AlertSettings.flap_threshold.default)


class StaleState(RuntimeError):
    """A monitor changed under the batch's lock: roll back and start again."""


class Recorder:
    """Writes batches of check outcomes; safe to share between threads."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.mail_domain = outbox.mail_domain(settings.mail_from)

    def record(self, outcomes: Sequence[CheckOutcome], *, now: datetime) -> list[Recorded]:
        if not outcomes:
            return []
        return retry_locked(self._record_batch)(outcomes, now)

    def _record_batch(self, outcomes: Sequence[CheckOutcome], now: datetime) -> list[Recorded]:
        with database.connection_context():
            ids = {o.monitor_id for o in outcomes}
            # Read before the write lock is taken: no schedule is evaluated
            # while it is held (maintenance_windows caches the evaluation per
            # user for a few seconds; the owners and their windows are reads).
            in_maintenance = maintenance_windows.in_maintenance(now, ids)
            with write_tx():
                batch = Batch.load(ids)
                batch.maintenance = in_maintenance
                plans = [self._plan(outcome, batch) for outcome in outcomes]
                if not batch.write_runs(plans):
                    raise StaleState("a monitor's state_version moved under the lock")
                self._write_all_events(plans, batch, now)
                cells = rollups.add_runs(
                    [
                        rollups.RunSample(
                            p.outcome.monitor_id,
                            int(p.outcome.checked_at.timestamp()),
                            p.done.run_status != "offline",
                            p.outcome.response_time,
                        )
                        for p in plans
                        if p.done.run_id is not None
                        and not p.outcome.history_only
                        and not p.in_maintenance
                        and p.outcome.counted
                    ],
                    versions_moved=versions_moved(plans),
                )
        rollups.committed(cells)
        return [plan.done for plan in plans]

    # -- the in-memory part: one run at a time, in order --------------------

    def _plan(self, outcome: CheckOutcome, batch: Batch) -> Plan:
        monitor = batch.monitors.get(outcome.monitor_id)
        if monitor is None:
            return Plan(outcome, Recorded(outcome.monitor_id, skipped="deleted"))
        if monitor.created_at != outcome.monitor_created_at:
            # The id now names another monitor: the one checked is gone, and
            # nothing of its run may land on the newcomer (maybe another user's).
            return Plan(outcome, Recorded(outcome.monitor_id, skipped="replaced"))
        if outcome.lease_owner is not None and not batch.holds(
            outcome.monitor_id, outcome.location, outcome.lease_owner
        ):
            # The lease expired and another process took the check over: a late
            # result is refused whole (run, state, schedule), or it would run twice.
            return Plan(outcome, Recorded(outcome.monitor_id, skipped="lease_lost"))
        if outcome.ping is not None and monitor.paused:
            # A paused heartbeat records no ping (the endpoint answers 200).
            return Plan(outcome, Recorded(outcome.monitor_id, skipped="paused"))
        if outcome.expect_version is not None and outcome.expect_version != monitor.state_version:
            # Drawn from a state that has moved on (a ping came meanwhile):
            # not recorded; the lease is dropped, the schedule left as it is.
            stale = replace(outcome, next_check_at=None)
            return Plan(stale, Recorded(outcome.monitor_id, skipped="stale"), push_forward=True)
        if outcome.history_only:
            # A start or log ping: a history entry under the current status.
            done = Recorded(monitor.id, None, monitor.state.status, monitor.state.status)
            return Plan(outcome, done, record_run=True)
        try:
            run_status = state.run_status(
                state.RunFacts(
                    passed=outcome.passed,
                    retried=outcome.retried,
                    response_time=outcome.response_time,
                    cert_expires_at=outcome.cert_expires_at,
                    is_https=_is_tls_target(monitor.url),
                ),
                degraded_ms=monitor.degraded_response_time,
                now=outcome.checked_at,
            )
            done = Recorded(monitor.id, None, run_status, monitor.state.status)
            if not outcome.counted:
                # The agent's uplink was down: history only; the lease is
                # given back with the next due time, the location's status kept.
                return Plan(outcome, done, record_run=True, push_forward=True)
            plan = Plan(outcome, done, record_run=True)
            if monitor.paused or not monitor.checks_supported:
                done.skipped = "paused" if monitor.paused else "unsupported"
            else:
                self._apply_state(monitor, plan, run_status, batch)
                done.monitor_status = plan.status
        except Exception:  # one bad monitor never stops the rest
            log.exception(
                "recording check of monitor %s failed; pushing it forward", outcome.monitor_id
            )
            return Plan(outcome, Recorded(outcome.monitor_id, skipped="error"), push_forward=True)
        batch.saw_location(
            outcome.monitor_id,
            outcome.location,
            run_status,
            outcome.lease_owner,
            outcome.checked_at,
        )
        return plan

    def _apply_state(
        self, monitor: BatchMonitor, plan: Plan, run_status: str, batch: Batch
    ) -> None:
        """The monitor's next state after this run, into *plan*; the batch's view moves on."""
        outcome, prev = plan.outcome, monitor.state
        plan.in_maintenance = monitor.id in batch.maintenance
        tr = state.transition(
            prev,
            location=outcome.location,
            status=run_status,
            locations=list(monitor.locations),
            has_active_incident=batch.has_active(monitor.id),
            location_statuses=batch.location_statuses(monitor.id),
            location_checked_at=batch.location_checked_at(monitor.id),
            rules=batch.rules.get(monitor.id, _DEFAULT_RULES),
            at=outcome.checked_at,
            in_maintenance=plan.in_maintenance,
            interval=monitor.check_interval,
        )
        at, passed = outcome.checked_at, run_status != "offline"
        plan.transition = tr
        plan.version = monitor.state_version
        plan.state = state.moved(
            tr.state,
            last_check=at,
            last_success=at if passed else prev.last_success,
            last_failure=prev.last_failure if passed else at,
            response_time=outcome.response_time,
            status_code=outcome.status_code,
            last_error=outcome.error,
            **self._cert_columns(monitor, plan, batch),
        )
        plan.flapping_began = prev.flapping_since
        # Later runs of this monitor in the same batch start from this state.
        monitor.state = plan.state
        monitor.state_version += 1
        if tr.open_incident:
            batch.active_flags[monitor.id] = True
        elif tr.resolve_incident:
            batch.active_flags[monitor.id] = False

    def _cert_columns(self, monitor: BatchMonitor, plan: Plan, batch: Batch) -> dict[str, Any]:
        """The certificate columns after this run; its expiry alert (if any) into *plan*.

        A run that saw no certificate keeps what the row knows. Only https and
        tcp (tls) targets alert: an http monitor redirected to https is not
        asked about the certificate.
        """
        outcome, known_state = plan.outcome, monitor.state
        columns = {
            "cert_expires_at": outcome.cert_expires_at or known_state.cert_expires_at,
            "cert_serial": known_state.cert_serial,
            "cert_alerted_days": known_state.cert_alerted_days,
        }
        if outcome.cert_expires_at is None:
            return columns
        columns["cert_serial"] = outcome.cert_serial
        if not _is_tls_target(monitor.url):
            return columns
        known = None
        if known_state.cert_expires_at is not None:
            known = cert_alerts.SeenCert(known_state.cert_serial, known_state.cert_expires_at)
        seen = cert_alerts.SeenCert(outcome.cert_serial, outcome.cert_expires_at)
        thresholds = batch.cert_days.get(monitor.id, list(DEFAULT_CERT_EXPIRY_DAYS))
        plan.cert = cert_alerts.decide(
            known, known_state.cert_alerted_days, seen, thresholds, outcome.checked_at
        )
        plan.seen_cert = seen
        columns["cert_alerted_days"] = plan.cert.alerted_days
        return columns

    # -- notifications: the rare runs that open or resolve an incident, or ---
    # -- start or settle flapping ---------------------------------------------

    def _write_all_events(self, plans: list[Plan], batch: Batch, now: datetime) -> None:
        """The batch's notifications, ancestors' before their descendants'.

        The common batch has no event and no suppressed alert waiting: one
        pass over the plans, no query. Otherwise the dependency chains
        through the monitors concerned are read with one query
        (``Dependencies.load``) and the work is done parents first, so a
        child whose first failure lands in its parent's batch is blocked.
        """
        held = {m for m, note in batch.active.items() if note.suppressed_by is not None}
        work = [
            p
            for p in plans
            if p.has_events or p.cert_event or (held and p.outcome.monitor_id in held)
        ]
        if not work:
            return
        asked = {p.outcome.monitor_id for p in work if p.opens or p.resolves}
        asked |= {p.outcome.monitor_id for p in work if p.outcome.monitor_id in held}
        deps = Dependencies.load(asked) if asked else None
        if deps is not None and deps.parents:
            depth = _depths(deps.parents)
            work.sort(key=lambda p: depth.get(p.outcome.monitor_id, 0))  # stable
            opening = {p.outcome.monitor_id for p in work if p.opens}
            for mid in opening:
                if (row := batch.monitors.get(mid)) is not None:
                    deps.names.setdefault(mid, row.name)
        else:
            opening = set()
        for plan in work:
            if plan.has_events or plan.cert_event:
                self._write_events(plan, batch, now, deps, opening)
            elif plan.transition is not None:
                self._release(plan, batch, now, deps)

    def _release(self, plan: Plan, batch: Batch, now: datetime, deps: Dependencies | None) -> None:
        """A suppressed downtime's alert, sent at the run that finds no ancestor down any more.

        Only a failed run confirms the monitor is still down; while an
        ancestor is (again) down, the notification names that one instead.
        """
        monitor_id = plan.outcome.monitor_id
        note = batch.active.get(monitor_id)
        if note is None or note.suppressed_by is None or deps is None:
            return
        if plan.done.run_status != "offline":
            return
        blocker = _blocker(deps, monitor_id)
        if blocker is not None:
            if blocker != note.suppressed_by:
                Notification.update(suppressed_by=blocker).where(
                    Notification.id == note.id
                ).execute()
                note.suppressed_by = blocker
            return
        monitor = Monitor.get_by_id(monitor_id)
        alerts = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id) or AlertSettings(
            monitor=monitor.id
        )
        at = plan.outcome.checked_at
        note.suppressed_by = None
        note.next_reminder_at = first_reminder(at, alerts.reminder_interval)
        Notification.update(suppressed_by=None, next_reminder_at=note.next_reminder_at).where(
            Notification.id == note.id
        ).execute()
        deps.down[monitor_id] = (note.id, None)
        outbox.enqueue(
            note,
            monitor,
            alerts,
            default_recipients=outbox.team_recipients(monitor.team_id),
            mail_domain=self.mail_domain,
            now=now,
            content=outbox.content_for(note, monitor, **_effects_down(deps, monitor_id, set())),
        )
        plan.done.released.append(note.id)

    def _write_events(
        self,
        plan: Plan,
        batch: Batch,
        now: datetime,
        deps: Dependencies | None = None,
        opening: set[int] | None = None,
    ) -> None:
        outcome = plan.outcome
        monitor = Monitor.get_by_id(outcome.monitor_id)
        alerts = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id) or AlertSettings(
            monitor=monitor.id
        )
        team_emails = outbox.team_recipients(monitor.team_id)

        def enqueue(note: Notification, content: AlertContent | None = None) -> None:
            outbox.enqueue(
                note,
                monitor,
                alerts,
                default_recipients=team_emails,
                mail_domain=self.mail_domain,
                now=now,
                content=content,
            )

        tr = plan.transition
        assert tr is not None
        if tr.flapping_started or tr.flapping_settled:
            enqueue(self._flap_notification(monitor, outcome, tr, plan.flapping_began))
        if plan.cert_event:
            note = self._cert_alert(monitor, plan)
            if note is not None:
                assert plan.cert is not None and plan.seen_cert is not None
                enqueue(
                    note,
                    outbox.content_for(
                        note,
                        monitor,
                        cert_not_after=plan.seen_cert.not_after,
                        cert_serial=plan.seen_cert.serial,
                        cert_days_left=plan.cert.days_left,
                        cert_threshold=plan.cert.alert_days,
                    ),
                )
                plan.done.opened.append(note.id)

        if plan.opens:
            assert plan.state is not None
            started = plan.state.offline_since or outcome.checked_at
            blocker = _blocker(deps, monitor.id) if deps is not None else None
            note = self._open_incident(
                monitor, outcome, started, alerts.reminder_interval, suppressed_by=blocker
            )
            batch.active[monitor.id] = note
            if deps is not None:
                deps.down[monitor.id] = (note.id, blocker)
                deps.names[monitor.id] = monitor.name
            if blocker is None:
                effects = _effects_down(deps, monitor.id, opening or set()) if deps else {}
                enqueue(note, outbox.content_for(note, monitor, **effects))
            plan.done.opened.append(note.id)
        if plan.resolves and (active := batch.active.pop(monitor.id, None)) is not None:
            note = self._resolve_incident(monitor, active, outcome)
            if deps is not None:
                deps.down.pop(monitor.id, None)
            if note is not None:
                if active.suppressed_by is None:
                    # A downtime never announced resolves silently.
                    effects = _effects_up(deps, monitor.id) if deps else {}
                    enqueue(note, outbox.content_for(note, monitor, **effects))
                plan.done.resolved.append(active.id)

    def _cert_alert(self, monitor: Monitor, plan: Plan) -> Notification | None:
        """Resolve the certificate alert still active; write the new one, if any.

        The active one is superseded by a smaller threshold, or answered by a
        renewed certificate. The new row's ``cert_alert_key`` is unique: should
        another writer ever have alerted this certificate's threshold already
        (the monitor row lock makes that impossible today), the insert is
        undone in its savepoint and nothing is sent twice.
        """
        decision, seen, outcome = plan.cert, plan.seen_cert, plan.outcome
        assert decision is not None and seen is not None
        note = None
        if decision.alert_days is not None:
            note = self._insert_cert_alert(monitor, outcome, seen, decision)
            if note is None:
                return None
        active = Notification.select().where(
            (Notification.monitor == monitor.id)
            & (Notification.type == "cert_expiry")
            & (Notification.status == "active")
            & (Notification.id != (note.id if note is not None else 0))
        )
        for old in active:
            old.resolve_if_active(outcome.checked_at)
        return note

    def _insert_cert_alert(
        self,
        monitor: Monitor,
        outcome: CheckOutcome,
        seen: cert_alerts.SeenCert,
        decision: cert_alerts.CertDecision,
    ) -> Notification | None:
        assert decision.alert_days is not None
        message = cert_message(monitor.name, decision.alert_days, decision.days_left)
        try:
            with database.atomic():
                return Notification.create(
                    monitor=monitor.id,
                    user=monitor.user_id,
                    team=monitor.team_id,
                    type="cert_expiry",
                    message=f"{message} (not after {format_utc(seen.not_after)})",
                    status="active",
                    started_at=outcome.checked_at,
                    error_message="",
                    cert_alert_key=cert_alerts.alert_key(monitor.id, seen, decision.alert_days),
                    created_at=outcome.checked_at,
                )
        except IntegrityError:
            log.warning("certificate alert of monitor %s already sent", monitor.id)
            return None

    def _open_incident(
        self,
        monitor: Monitor,
        outcome: CheckOutcome,
        started_at: datetime,
        reminder_interval: int | None,
        *,
        suppressed_by: int | None = None,
    ) -> Notification:
        """The downtime notification; *suppressed_by*: the blocking ancestor's (no reminders)."""
        error = outcome.error or "check failed"
        reminder = None if suppressed_by else first_reminder(outcome.checked_at, reminder_interval)
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
            team=monitor.team_id,
            type="downtime",
            message=notification_message("downtime", monitor.name, error, None),
            status="active",
            started_at=started_at,
            error_status_code=outcome.status_code,
            error_response_time=outcome.response_time,
            error_message=error,
            created_at=outcome.checked_at,
            next_reminder_at=reminder,
            suppressed_by=suppressed_by,
        )

    def _resolve_incident(
        self, monitor: Monitor, active: Notification, outcome: CheckOutcome
    ) -> Notification | None:
        if not active.resolve_if_active(outcome.checked_at):
            return None
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
            team=monitor.team_id,
            type="recovery",
            message=notification_message("recovery", monitor.name, "", active.duration),
            status="resolved",
            started_at=active.started_at,
            resolved_at=active.resolved_at,
            duration=active.duration,
            error_status_code=outcome.status_code,
            error_response_time=outcome.response_time,
            error_message="",
            created_at=outcome.checked_at,
            suppressed_by=active.suppressed_by,
        )

    def _flap_notification(
        self,
        monitor: Monitor,
        outcome: CheckOutcome,
        tr: state.Transition,
        began: datetime | None,
    ) -> Notification:
        """The ``flapping`` (or, on settling, ``flapping_settled``) notification of *tr*.

        *began*: when the flapping that *tr* settles began.
        """
        at = outcome.checked_at
        if tr.flapping_started:
            kind, since, error = "flapping", at, ""
        else:
            kind, error = "flapping_settled", ""
            since = began or at
            if tr.status == "offline":
                error = outcome.error or "check failed"
        duration = max(0, int((at - since).total_seconds()))
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
            team=monitor.team_id,
            type=kind,
            message=notification_message(kind, monitor.name, error, duration),
            status="resolved",
            started_at=since,
            resolved_at=at,
            duration=duration,
            error_status_code=outcome.status_code,
            error_response_time=outcome.response_time,
            error_message=error,
            created_at=at,
        )


def _is_tls_target(url: str | None) -> bool:
    """https, or tcp (whose probe reports a certificate only with ``tls``)."""
    return (url or "").lower().startswith(("https:", "tcp:"))


# -- dependencies (docs/alerts.md#dependencies) -----------------------------------

MAX_EFFECTS_LISTED = 50  # the blocked monitors a parent's DOWN message names


def _depths(parents: dict[int, set[int]]) -> dict[int, int]:
    """Each monitor's longest chain up: sorting by it puts ancestors first."""
    depth: dict[int, int] = {}
    for start in parents:
        stack = [start]
        while stack:
            node = stack[-1]
            if node in depth:
                stack.pop()
                continue
            todo = [p for p in parents.get(node, ()) if p not in depth]
            if todo:
                stack.extend(todo)
                continue
            depth[node] = 1 + max((depth[p] for p in parents.get(node, ())), default=-1)
            stack.pop()
    return depth


def _blocker(deps: Dependencies, monitor_id: int) -> int | None:
    """The open downtime that blocks *monitor_id*: its down ancestors' root cause first."""
    down = [deps.down[a] for a in graph.ancestors(deps.parents, monitor_id) if a in deps.down]
    if not down:
        return None
    roots = [note for note, suppressed_by in down if suppressed_by is None]
    return min(roots or [note for note, _ in down])


def _descendants(deps: Dependencies, monitor_id: int) -> set[int]:
    return graph.ancestors(graph.children_of(deps.parents), monitor_id)


def _effects_down(deps: Dependencies, monitor_id: int, opening: set[int]) -> dict[str, Any]:
    """What a DOWN message says of the monitors *monitor_id* blocks that are down.

    *opening*: monitors whose downtime opens later in this batch (down too).
    """
    below = _descendants(deps, monitor_id)
    if not below:
        return {}
    down = below & (set(deps.down) | opening)
    names = sorted(deps.names.get(m) or f"#{m}" for m in down)
    return {
        "blocked_down": tuple(names[:MAX_EFFECTS_LISTED]),
        "blocked_more": max(0, len(names) - MAX_EFFECTS_LISTED),
    }


def _effects_up(deps: Dependencies, monitor_id: int) -> dict[str, Any]:
    """What an UP message says: how many of the monitors it blocked are still down."""
    below = _descendants(deps, monitor_id)
    if not below:
        return {}
    return {"blocked_still_down": len(below & set(deps.down))}
