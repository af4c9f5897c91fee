"""Notification rows written straight to the database, where a test needs one without an outage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from uptime_server.models import Notification


def add_notification(
    monitor: Any, user: Any, at: datetime, message: str, **fields: Any
) -> Notification:
    """A notification started (and written) at *at*; an active downtime unless *fields* differ."""
    values = {"type": "downtime", "status": "active", **fields}
    return Notification.create(
        monitor=monitor, user=user, message=message, started_at=at, created_at=at, **values
    )
