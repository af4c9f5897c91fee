"""The notifications of noise control: reminders and flapping (docs/alerts.md).

The recorder writes the flapping ones (``engine/recorder.py``), the reminder
sweep the reminders (``engine/reminders.py``).

Each is an ordinary notification row of its own type, written in the
transaction that decides it and sent through the same outbox as a downtime
(``outbox.enqueue``), so every channel a downtime reaches gets them too. They
are records of a message, not incidents: created ``resolved`` (nothing to
acknowledge or resolve), ``resolved_at`` the moment they speak of.

- ``reminder``: the downtime is still active and unacknowledged;
  ``started_at`` and ``error_details`` are the downtime's, ``duration`` how
  long it has lasted so far.
- ``flapping``: alerts are held from now on; ``started_at`` = when it began.
- ``flapping_settled``: the final state; ``started_at`` = when flapping
  began, ``duration`` how long it lasted, ``error_message`` the last error if
  it settled DOWN and ``""`` if UP.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from uptime_server.models import Monitor, Notification
from uptime_server.notify.message import notification_message


def first_reminder(opened_at: datetime, interval: int | None) -> datetime | None:
    """When a downtime opened at *opened_at* is first reminded of (None: never)."""
    return None if interval is None else opened_at + timedelta(seconds=interval)


def reminder_notification(downtime: Notification, monitor: Monitor, at: datetime) -> Notification:
    """A ``reminder`` of the active *downtime*, at *at*."""
    duration = max(0, int((at - downtime.started_at).total_seconds()))
    return Notification.create(
        monitor=monitor.id,
        user=monitor.user_id,
        team=monitor.team_id,
        type="reminder",
        message=notification_message("reminder", monitor.name, downtime.error_message, duration),
        status="resolved",
        started_at=downtime.started_at,
        resolved_at=at,
        duration=duration,
        error_status_code=downtime.error_status_code,
        error_response_time=downtime.error_response_time,
        error_message=downtime.error_message,
        created_at=at,
    )
