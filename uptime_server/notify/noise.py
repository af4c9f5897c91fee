"""The notifications of noise control: reminders and flapping (docs/alerts.md).

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

from uptime_server.engine.outcomes import CheckOutcome
from uptime_server.engine.state import Transition
from uptime_server.models import Monitor, Notification
from uptime_server.notify.message import notification_message


def first_reminder(opened_at: datetime, interval: int | None) -> datetime | None:
    """When a downtime opened at *opened_at* is first reminded of (None: never)."""
    return None if interval is None else opened_at + timedelta(seconds=interval)


def flap_notification(
    monitor: Monitor, outcome: CheckOutcome, tr: Transition, began: datetime | None
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


def reminder_notification(downtime: Notification, monitor: Monitor, at: datetime) -> Notification:
    """A ``reminder`` of the active *downtime*, at *at*."""
    duration = max(0, int((at - downtime.started_at).total_seconds()))
    return Notification.create(
        monitor=monitor.id,
        user=monitor.user_id,
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
