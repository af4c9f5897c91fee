"""The writer's transaction: runs, state, notifications, outbox, roll-ups.

``Recorder.record`` takes a batch of finished check runs and writes, in one
transaction: each raw run, the monitor's new state (conditional on its
``state_version``), any notification the transition opens or resolves with its
outbox rows, the scheduling row (due time, lease released) and the roll-ups.
A run whose state logic raises is rolled back to its savepoint, logged, and
its monitor pushed forward; it never takes the rest of the batch with it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from uptime_server import rollups
from uptime_server.config import Settings
from uptime_server.db import database, is_sqlite, retry_locked, write_tx
from uptime_server.engine import state
from uptime_server.models import (
    AlertSettings,
    CheckRun,
    Monitor,
    MonitorLocation,
    Notification,
    User,
)
from uptime_server.notify import outbox
from uptime_server.notify.message import notification_message

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckOutcome:
    """One finished check run in one location, as the runner hands it over."""

    monitor_id: int
    location: str
    checked_at: datetime
    passed: bool
    response_time: int | None
    status_code: int | None
    error: str | None
    attempts: int = 1
    retried: bool = False
    cert_expires_at: datetime | None = None
    # Scheduling: the next due time and the lease to release (None for an
    # ad-hoc "test now" run, which leaves the schedule alone).
    next_check_at: datetime | None = None
    lease_owner: str | None = None


@dataclass
class Recorded:
    monitor_id: int
    run_id: int | None = None
    run_status: str | None = None
    monitor_status: str | None = None
    opened: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    skipped: str | None = None


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
        results: list[Recorded] = []
        samples: list[rollups.RunSample] = []
        with database.connection_context(), write_tx():
            for outcome in outcomes:
                try:
                    with database.atomic():
                        done = self._record_one(outcome, now)
                except Exception:  # noqa: BLE001 - one bad monitor never stops the rest
                    log.exception(
                        "recording check of monitor %s failed; pushing it forward",
                        outcome.monitor_id,
                    )
                    self._push_forward(outcome)
                    done = Recorded(outcome.monitor_id, skipped="error")
                results.append(done)
                if done.run_id is not None:
                    samples.append(
                        rollups.RunSample(
                            outcome.monitor_id,
                            int(outcome.checked_at.timestamp()),
                            done.run_status != "offline",
                            outcome.response_time,
                        )
                    )
            rollups.add_runs(samples)
        return results

    def _record_one(self, outcome: CheckOutcome, now: datetime) -> Recorded:
        monitor = _lock_monitor(outcome.monitor_id)
        if monitor is None:
            return Recorded(outcome.monitor_id, skipped="deleted")
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
        run = CheckRun.create(
            monitor=monitor.id,
            location=outcome.location,
            checked_at=outcome.checked_at,
            status=run_status,
            response_time=outcome.response_time,
            status_code=outcome.status_code,
            error=outcome.error,
            attempts=outcome.attempts,
        )
        done = Recorded(monitor.id, run.id, run_status, monitor.status)
        previous = _location_statuses(monitor.id)
        self._update_slot(outcome, run_status)
        if monitor.paused or not monitor.checks_supported:
            done.skipped = "paused" if monitor.paused else "unsupported"
            return done
        self._apply_state(monitor, outcome, run_status, previous, done, now)
        return done

    def _update_slot(self, outcome: CheckOutcome, run_status: str) -> None:
        changes: dict = {
            MonitorLocation.last_status: run_status,
            MonitorLocation.last_checked_at: outcome.checked_at,
        }
        where = (MonitorLocation.monitor == outcome.monitor_id) & (
            MonitorLocation.location == outcome.location
        )
        if outcome.lease_owner is not None:
            # Only the holder of the claim moves the schedule on.
            changes[MonitorLocation.next_check_at] = outcome.next_check_at
            changes[MonitorLocation.lease_owner] = None
            changes[MonitorLocation.lease_expires_at] = None
            where &= MonitorLocation.lease_owner == outcome.lease_owner
        MonitorLocation.update(changes).where(where).execute()

    def _apply_state(
        self,
        monitor: Monitor,
        outcome: CheckOutcome,
        run_status: str,
        previous: dict[str, str],
        done: Recorded,
        now: datetime,
    ) -> None:
        alerts = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id) or AlertSettings(
            monitor=monitor.id
        )
        active = Notification.get_or_none(
            (Notification.monitor == monitor.id)
            & (Notification.status == "active")
            & (Notification.type == "downtime")
        )
        prev = state.MonitorState(
            status=monitor.status,
            consecutive_failures=monitor.consecutive_failures,
            alerts_suppressed=monitor.alerts_suppressed,
            has_active_incident=active is not None,
            location_statuses=previous,
        )
        tr = state.transition(
            prev,
            location=outcome.location,
            status=run_status,
            locations=list(monitor.locations),
            alert_threshold=alerts.alert_threshold,
        )
        offline_since = None
        if tr.status == "offline":
            offline_since = monitor.offline_since or outcome.checked_at
        fields = {
            Monitor.status: tr.status,
            Monitor.consecutive_failures: tr.consecutive_failures,
            Monitor.alerts_suppressed: tr.alerts_suppressed,
            Monitor.offline_since: offline_since,
            Monitor.response_time: outcome.response_time,
            Monitor.status_code: outcome.status_code,
            Monitor.last_error: outcome.error,
            Monitor.last_check: outcome.checked_at,
            Monitor.cert_expires_at: outcome.cert_expires_at or monitor.cert_expires_at,
            Monitor.state_version: Monitor.state_version + 1,
        }
        fields[Monitor.last_success if run_status != "offline" else Monitor.last_failure] = (
            outcome.checked_at
        )
        updated = (
            Monitor.update(fields)
            .where((Monitor.id == monitor.id) & (Monitor.state_version == monitor.state_version))
            .execute()
        )
        if not updated:
            # Someone else changed the state since we read it (pause, another
            # writer): this run is history, not a transition.
            done.skipped = "stale"
            return
        done.monitor_status = tr.status
        owner_email = User.get_by_id(monitor.user_id).email
        if tr.open_incident:
            note = self._open_incident(monitor, outcome, offline_since or outcome.checked_at)
            outbox.enqueue(
                note,
                monitor,
                alerts,
                owner_email=owner_email,
                mail_domain=self.mail_domain,
                now=now,
            )
            done.opened.append(note.id)
        if tr.resolve_incident and active is not None:
            note = self._resolve_incident(monitor, active, outcome)
            if note is not None:
                outbox.enqueue(
                    note,
                    monitor,
                    alerts,
                    owner_email=owner_email,
                    mail_domain=self.mail_domain,
                    now=now,
                )
                done.resolved.append(active.id)

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
        resolved_at = outcome.checked_at
        duration = max(0, int((resolved_at - active.started_at).total_seconds()))
        updated = (
            Notification.update(status="resolved", resolved_at=resolved_at, duration=duration)
            .where((Notification.id == active.id) & (Notification.status == "active"))
            .execute()
        )
        if not updated:
            return None
        return Notification.create(
            monitor=monitor.id,
            user=monitor.user_id,
            type="recovery",
            message=notification_message("recovery", monitor.name, "", duration),
            status="resolved",
            started_at=active.started_at,
            resolved_at=resolved_at,
            duration=duration,
            error_status_code=outcome.status_code,
            error_response_time=outcome.response_time,
            error_message="",
            created_at=outcome.checked_at,
        )

    def _push_forward(self, outcome: CheckOutcome) -> None:
        """After a failed write, still release the claim and move the due time."""
        if outcome.lease_owner is None:
            return
        try:
            with database.atomic():
                MonitorLocation.update(
                    next_check_at=outcome.next_check_at, lease_owner=None, lease_expires_at=None
                ).where(
                    (MonitorLocation.monitor == outcome.monitor_id)
                    & (MonitorLocation.location == outcome.location)
                    & (MonitorLocation.lease_owner == outcome.lease_owner)
                ).execute()
        except Exception:  # noqa: BLE001
            log.exception("could not push monitor %s forward", outcome.monitor_id)


def _lock_monitor(monitor_id: int) -> Monitor | None:
    query = Monitor.select().where(Monitor.id == monitor_id)
    if not is_sqlite():
        # Serialises writers of one monitor on PostgreSQL; SQLite's
        # BEGIN IMMEDIATE already admits one writer at a time.
        query = query.for_update()
    return query.first()


def _location_statuses(monitor_id: int) -> dict[str, str]:
    rows = MonitorLocation.select(MonitorLocation.location, MonitorLocation.last_status).where(
        (MonitorLocation.monitor == monitor_id) & MonitorLocation.last_status.is_null(False)
    )
    return {row.location: row.last_status for row in rows}
