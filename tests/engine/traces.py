"""What a check run leaves on a monitor, to show that nothing landed on one."""

from __future__ import annotations

from typing import Any

from uptime_server.models import CheckRun, Monitor, MonitorLocation, Notification, Outbox, Rollup

STATE = (
    "status",
    "consecutive_failures",
    "offline_since",
    "state_version",
    "last_check",
    "last_success",
    "last_failure",
    "last_error",
    "status_code",
    "response_time",
)


def traces(monitor_id: int) -> dict[str, Any]:
    """A monitor's state columns and schedule rows; counts of its runs, roll-ups, alerts."""
    monitor = Monitor.get_by_id(monitor_id)
    slots = MonitorLocation.select().where(MonitorLocation.monitor == monitor_id)
    notes = Notification.select(Notification.id).where(Notification.monitor == monitor_id)
    return {
        "state": {name: getattr(monitor, name) for name in STATE},
        "slots": sorted((s.location, s.last_status, s.last_checked_at) for s in slots),
        "runs": CheckRun.select().where(CheckRun.monitor == monitor_id).count(),
        "rollups": Rollup.select().where(Rollup.monitor == monitor_id).count(),
        "notifications": notes.count(),
        "outbox": Outbox.select().where(Outbox.notification.in_(notes)).count(),
    }
