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

A run whose state logic raises is logged and its monitor pushed forward (the
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

from uptime_server.config import Settings
from uptime_server.db import database, retry_locked, write_tx
from uptime_server.engine import state
from uptime_server.engine.outcomes import CheckOutcome, Plan, Recorded
from uptime_server.engine.recorder_batch import Batch, BatchMonitor
from uptime_server.models import AlertSettings, Monitor, Notification, User
from uptime_server.notify import outbox
from uptime_server.notify.message import notification_message
from uptime_server.stats import rollups

log = logging.getLogger(__name__)


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
        with database.connection_context(), write_tx():
            batch = Batch.load({o.monitor_id for o in outcomes})
            plans = [self._plan(outcome, batch) for outcome in outcomes]
            if not batch.write_runs(plans):
                raise StaleState("a monitor's state_version moved under the lock")
            for plan in plans:
                if plan.opens or plan.resolves:
                    self._write_events(plan, batch, now)
            rollups.add_runs(
                [
                    rollups.RunSample(
                        p.outcome.monitor_id,
                        int(p.outcome.checked_at.timestamp()),
                        p.done.run_status != "offline",
                        p.outcome.response_time,
                    )
                    for p in plans
                    if p.done.run_id is not None and not p.outcome.history_only
                ]
            )
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
            done = Recorded(monitor.id, None, monitor.status, monitor.status)
            return Plan(outcome, done, record_run=True)
        try:
            run_status = state.run_status(
                state.RunFacts(
                    passed=outcome.passed,
                    retried=outcome.retried,
                    response_time=outcome.response_time,
                    cert_expires_at=outcome.cert_expires_at,
                    is_https=(monitor.url or "").lower().startswith("https:"),
                ),
                degraded_ms=monitor.degraded_response_time,
                now=outcome.checked_at,
            )
            done = Recorded(monitor.id, None, run_status, monitor.status)
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
        batch.saw_location(outcome.monitor_id, outcome.location, run_status, outcome.lease_owner)
        return plan

    def _apply_state(
        self, monitor: BatchMonitor, plan: Plan, run_status: str, batch: Batch
    ) -> None:
        """The monitor's next state after this run, into *plan*; the batch's view moves on."""
        outcome = plan.outcome
        prev = state.MonitorState(
            status=monitor.status,
            consecutive_failures=monitor.consecutive_failures,
            alerts_suppressed=monitor.alerts_suppressed,
            has_active_incident=batch.has_active(monitor.id),
            location_statuses=batch.location_statuses(monitor.id, outcome.location),
        )
        tr = state.transition(
            prev,
            location=outcome.location,
            status=run_status,
            locations=list(monitor.locations),
            alert_threshold=batch.thresholds.get(monitor.id, 1),
        )
        offline_since = None
        if tr.status == "offline":
            offline_since = monitor.offline_since or outcome.checked_at
        plan.transition = tr
        plan.version = monitor.state_version
        plan.offline_since = offline_since
        plan.cert_expires_at = outcome.cert_expires_at or monitor.cert_expires_at
        # Later runs of this monitor in the same batch start from this state.
        monitor.status = tr.status
        monitor.consecutive_failures = tr.consecutive_failures
        monitor.alerts_suppressed = tr.alerts_suppressed
        monitor.offline_since = offline_since
        monitor.cert_expires_at = plan.cert_expires_at
        monitor.state_version += 1
        if tr.open_incident:
            batch.active_flags[monitor.id] = True
        elif tr.resolve_incident:
            batch.active_flags[monitor.id] = False

    # -- notifications: the rare runs that open or resolve an incident -------

    def _write_events(self, plan: Plan, batch: Batch, now: datetime) -> None:
        outcome = plan.outcome
        monitor = Monitor.get_by_id(outcome.monitor_id)
        alerts = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id) or AlertSettings(
            monitor=monitor.id
        )
        owner_email = User.get_by_id(monitor.user_id).email

        def enqueue(note: Notification) -> None:
            outbox.enqueue(
                note,
                monitor,
                alerts,
                owner_email=owner_email,
                mail_domain=self.mail_domain,
                now=now,
            )

        if plan.opens:
            started = plan.offline_since or outcome.checked_at
            note = self._open_incident(monitor, outcome, started)
            batch.active[monitor.id] = note
            enqueue(note)
            plan.done.opened.append(note.id)
        if plan.resolves and (active := batch.active.pop(monitor.id, None)) is not None:
            note = self._resolve_incident(monitor, active, outcome)
            if note is not None:
                enqueue(note)
                plan.done.resolved.append(active.id)

    def _open_incident(
        self, monitor: Monitor, outcome: CheckOutcome, started_at: datetime
    ) -> Notification:
        error = outcome.error or "check failed"
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
            type="downtime",
            message=notification_message("downtime", monitor.name, error, None),
            status="active",
            started_at=started_at,
            error_status_code=outcome.status_code,
            error_response_time=outcome.response_time,
            error_message=error,
            created_at=outcome.checked_at,
        )

    def _resolve_incident(
        self, monitor: Monitor, active: Notification, outcome: CheckOutcome
    ) -> Notification | None:
        if not active.resolve_if_active(outcome.checked_at):
            return None
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
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
        )
