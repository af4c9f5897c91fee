"""Notification rows written straight to the database, where a test needs one without an outage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from uptime_server.models import Notification


def add_notification(
    monitor: Any,
    user: Any,
    at: datetime,
    message: str,
    *,
    kind: str = "downtime",
    status: str = "active",
    **fields: Any,
) -> Notification:
    """A notification of *kind* that started, and was written, at *at*."""
    return Notification.create(
        monitor=monitor,
        user=user,
        type=kind,
        message=message,
        status=status,
        started_at=at,
        created_at=at,
        **fields,
    )
