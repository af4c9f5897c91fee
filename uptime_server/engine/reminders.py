"""The reminder sweep: while a downtime stays active and unacknowledged, remind.

A daemon component with a one-iteration ``loop(now)`` (and a cron step). It
reads only due rows, through the index on ``notifications.next_reminder_at``:
active, unacknowledged downtimes whose reminder is due and whose monitor is
not flapping (alerts are held then; the reminder goes out once it settles).

Exactly once per interval, across restarts and daemons: each reminder is
taken by a conditional UPDATE that moves ``next_reminder_at`` on and bumps
``reminders_sent`` only if ``reminders_sent`` is still what the sweep read
(and the downtime still active and unacknowledged); the ``reminder``
notification and its outbox rows are written in that same transaction. Of two
sweeps racing for one reminder, the second's UPDATE matches no row (on
PostgreSQL it waits for the first to commit, then re-reads the row), so it
writes nothing. After a stall the next one is one interval from now: missed
reminders are not replayed.

A reminder due while the monitor is in a maintenance window is skipped (not
sent, not replayed after the window): the next one is one interval on
(docs/maintenance.md).

Acknowledging or resolving a downtime clears ``next_reminder_at``
(``Notification.resolve_if_active``, ``services.notifications.acknowledge``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from peewee import ModelSelect, fn

from uptime_server.config import Settings
from uptime_server.db import database, retry_locked, write_tx
from uptime_server.maintenance import windows
from uptime_server.models import AlertSettings, Monitor, Notification
from uptime_server.notify import outbox
from uptime_server.notify.noise import reminder_notification

log = logging.getLogger(__name__)

BATCH = 50
MAX_SLEEP = 30.0


def _reminding() -> ModelSelect:
    """Downtimes that are reminded of (due or not), of monitors not flapping, not suppressed."""
    return (
        Notification.select()
        .join(Monitor, on=(Notification.monitor == Monitor.id))
        .where(
            Notification.next_reminder_at.is_null(False)
            & (Notification.type == "downtime")
            & (Notification.status == "active")
            & ~Notification.acknowledged
            # A suppressed downtime is not reminded of (its alert was never sent).
            & Notification.suppressed_by.is_null()
            & Monitor.flapping_since.is_null()
        )
    )


class ReminderSweep:
    """One iteration = send up to ``batch`` due reminders."""

    name = "reminders"

    def __init__(self, settings: Settings, *, batch: int = BATCH) -> None:
        self.mail_domain = outbox.mail_domain(settings.mail_from)
        self.batch = batch
        self.sent = 0  # reminders written since start

    def loop(self, now: datetime) -> float:
        """Remind of what is due at *now*; return seconds until the next is due."""
        with database.connection_context():
            due = list(
                _reminding()
                .select(Notification.id, Notification.reminders_sent)
                .where(Notification.next_reminder_at <= now)
                .order_by(Notification.next_reminder_at)
                .limit(self.batch)
                .tuples()
            )
            for note_id, sent in due:
                try:
                    self.sent += retry_locked(self._remind)(note_id, sent, now)
                except Exception:  # one bad row never stops the others
                    log.exception("reminder of notification %s failed", note_id)
            if len(due) == self.batch:
                return 0.0
            following = _reminding().select(fn.MIN(Notification.next_reminder_at)).scalar()
        if following is None:
            return MAX_SLEEP
        following = Notification.next_reminder_at.python_value(following)
        return min(MAX_SLEEP, max(0.0, (following - now).total_seconds()))

    def shutdown(self, grace: float) -> None:
        pass  # nothing is held between iterations

    def _remind(self, note_id: int, sent: int, now: datetime) -> int:
        """Write one reminder of downtime *note_id* if it is still due; 1 if written."""
        # Whether its monitor is in maintenance is asked before the write lock
        # is taken: no schedule is evaluated while it is held.
        owner = (
            Notification.select(Notification.monitor, Notification.team)
            .where(Notification.id == note_id)
            .tuples()
            .first()
        )
        if owner is None:
            return 0
        in_maintenance = owner[0] in windows.active_monitor_ids(now, [owner[1]])
        with write_tx():
            note = Notification.get_or_none(Notification.id == note_id)
            if note is None or note.next_reminder_at is None or note.next_reminder_at > now:
                return 0
            alerts = AlertSettings.get_or_none(AlertSettings.monitor == note.monitor_id)
            interval = alerts.reminder_interval if alerts is not None else None
            guard = (
                (Notification.id == note_id)
                & (Notification.reminders_sent == sent)
                & (Notification.status == "active")
                & ~Notification.acknowledged
            )
            if interval is None:  # turned off since it was scheduled
                Notification.update(next_reminder_at=None).where(guard).execute()
                return 0
            step = timedelta(seconds=interval)
            following = note.next_reminder_at + step
            if following <= now:
                following = now + step
            monitor = Monitor.get_by_id(note.monitor_id)
            if in_maintenance:
                # Skipped, not postponed: the next one is one interval on.
                Notification.update(next_reminder_at=following).where(guard).execute()
                return 0
            taken = (
                Notification.update(
                    next_reminder_at=following, reminders_sent=Notification.reminders_sent + 1
                )
                .where(guard)
                .execute()
            )
            if not taken:
                return 0  # another sweep sent it, or it was acknowledged or resolved
            reminder = reminder_notification(note, monitor, now)
            outbox.enqueue(
                reminder,
                monitor,
                alerts,
                default_recipients=outbox.team_recipients(monitor.team_id),
                mail_domain=self.mail_domain,
                now=now,
            )
            return 1


def reschedule(monitor_id: int, interval: int | None) -> None:
    """After ``reminder_interval`` changed: the active downtime's next reminder.

    Counted from when the downtime opened: the first reminder not yet sent
    falls ``interval × (reminders sent + 1)`` after it (if that is past, the
    sweep sends it at once, then one interval later). None turns them off.
    """
    note = Notification.get_or_none(
        (Notification.monitor == monitor_id)
        & (Notification.type == "downtime")
        & (Notification.status == "active")
        & ~Notification.acknowledged
    )
    if note is None:
        return
    following = None
    if interval is not None:
        following = note.created_at + timedelta(seconds=interval * (note.reminders_sent + 1))
    Notification.update(next_reminder_at=following).where(
        (Notification.id == note.id) & (Notification.status == "active")
    ).execute()


def send_due_reminders(settings: Settings, now: datetime) -> int:
    """Cron mode: every reminder due at *now*; return how many were written."""
    sweep = ReminderSweep(settings)
    while sweep.loop(now) == 0.0:
        pass
    return sweep.sent
