"""Notification rows written straight to the database, where a test needs one without an outage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from uptime_server.models import Monitor, Notification


def add_notification(
    monitor: Any, user: Any, at: datetime, message: str, **fields: Any
) -> Notification:
    """A notification started (and written) at *at*; an active downtime unless *fields* differ."""
    values = {"type": "downtime", "status": "active", **fields}
    team = Monitor.select(Monitor.team).where(Monitor.id == monitor).scalar()
    return Notification.create(
        monitor=monitor,
        user=user,
        team=team,
        message=message,
        started_at=at,
        created_at=at,
        **values,
    )
