"""Maintenance windows of one team: create, list, edit, delete, open and end by hand
(docs/maintenance.md); which monitors are in maintenance at a moment is
``maintenance.windows.active_monitor_ids``.

A window covers its ``monitor_ids`` and its owner's monitors carrying *all*
of its ``tags`` (the ``GET /monitors?tag=`` rule). Another team's window is
``MAINTENANCE_NOT_FOUND``, as if it did not exist; another team's monitor id
in ``monitor_ids`` is a VALIDATION_ERROR that says no more than an unknown id.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from uptime_server.auth.teams import Acting
from uptime_server.db import INT64_MAX, write_tx
from uptime_server.errors import ApiError, validation_error
from uptime_server.maintenance.schedule import Schedule, Span, spans, union_seconds
from uptime_server.maintenance.windows import covered_ids
from uptime_server.models import MaintenanceWindow, Monitor
from uptime_server.schemas.maintenance import MaintenanceBody
from uptime_server.services import audit

MAX_WINDOWS_PER_TEAM = 200


def not_found() -> ApiError:
    return ApiError("MAINTENANCE_NOT_FOUND", "Maintenance window not found")


def get_owned(acting: Acting, window_id: int) -> MaintenanceWindow:
    if not 0 < window_id <= INT64_MAX:
        raise not_found()
    row = MaintenanceWindow.get_or_none(
        (MaintenanceWindow.id == window_id) & (MaintenanceWindow.team == acting.team_id)
    )
    if row is None:
        raise not_found()
    return row


def list_windows(acting: Acting) -> list[MaintenanceWindow]:
    return list(
        MaintenanceWindow.select()
        .where(MaintenanceWindow.team == acting.team_id)
        .order_by(MaintenanceWindow.id)
    )


def _check_monitor_ids(team_id: int, monitor_ids: list[int]) -> None:
    wanted = set(monitor_ids)
    owned = {
        mid
        for (mid,) in Monitor.select(Monitor.id)
        .where((Monitor.team == team_id) & Monitor.id.in_(list(wanted)))
        .tuples()
    }
    unknown = sorted(wanted - owned)
    if unknown:
        raise validation_error(
            {"monitor_ids": [f"no such monitor: {', '.join(map(str, unknown[:10]))}"]}
        )


def create_window(acting: Acting, body: MaintenanceBody, *, now: datetime) -> MaintenanceWindow:
    with write_tx():
        count = MaintenanceWindow.select().where(MaintenanceWindow.team == acting.team_id).count()
        if count >= MAX_WINDOWS_PER_TEAM:
            raise ApiError(
                "QUOTA_EXCEEDED",
                f"Maintenance window limit reached ({MAX_WINDOWS_PER_TEAM} per team)",
                {"limit": [str(MAX_WINDOWS_PER_TEAM)]},
            )
        _check_monitor_ids(acting.team_id, body.monitor_ids)
        window = MaintenanceWindow.create(
            user=acting.user_id,
            team=acting.team_id,
            **body.columns(),
            created_at=now,
            updated_at=now,
        )
        _record(acting, "maintenance.create", window, now)
        return window


def _record(
    acting: Acting, action: str, window: MaintenanceWindow, now: datetime, **details: Any
) -> None:
    details = {"title": window.title, **details}
    audit.record(acting, action, "maintenance", window.id, details, at=now)


def update_window(
    acting: Acting, window: MaintenanceWindow, body: MaintenanceBody, *, now: datetime
) -> MaintenanceWindow:
    """Replace the window's title, coverage and schedule (opening by hand is kept).

    The audit line names the fields that changed, if any.
    """
    columns = body.columns()
    before = {name: getattr(window, name) for name in columns}
    with write_tx():
        _check_monitor_ids(window.team_id, body.monitor_ids)
        MaintenanceWindow.update(**columns, updated_at=now).where(
            MaintenanceWindow.id == window.id
        ).execute()
        fresh = MaintenanceWindow.get_by_id(window.id)
        if fields := audit.changed_fields(before, columns):
            _record(acting, "maintenance.update", fresh, now, fields=fields)
    return fresh


def delete_window(acting: Acting, window: MaintenanceWindow, *, now: datetime) -> None:
    with write_tx():
        if window.delete_instance():
            _record(acting, "maintenance.delete", window, now)


def start_window(
    acting: Acting, window: MaintenanceWindow, *, duration: int | None, now: datetime
) -> MaintenanceWindow:
    """Open the window by hand from now, for *duration* seconds (None: until ended)."""
    end = now + timedelta(seconds=duration) if duration is not None else None
    with write_tx():
        MaintenanceWindow.update(manual_start=now, manual_end=end, updated_at=now).where(
            MaintenanceWindow.id == window.id
        ).execute()
        _record(acting, "maintenance.start", window, now, duration=duration)
    return MaintenanceWindow.get_by_id(window.id)


def end_window(acting: Acting, window: MaintenanceWindow, *, now: datetime) -> MaintenanceWindow:
    """Close the window now: the opening by hand, and the scheduled occurrence running."""
    changes: dict[str, object] = {"ended_at": now, "updated_at": now}
    if window.manual_start is not None and (window.manual_end is None or window.manual_end > now):
        changes["manual_end"] = now
    with write_tx():
        MaintenanceWindow.update(**changes).where(MaintenanceWindow.id == window.id).execute()
        _record(acting, "maintenance.end", window, now)
    return MaintenanceWindow.get_by_id(window.id)


# -- which monitors are in maintenance --------------------------------------------


def maintenance_seconds(monitor: Monitor, lo: datetime, hi: datetime) -> int:
    """Seconds of [lo, hi) in which a window of its owner covered *monitor* (overlaps once).

    Read from the windows as they stand: a window deleted or edited since
    no longer counts as it was (its runs stay out of the roll-ups).
    """
    found: list[Span] = []
    for window in MaintenanceWindow.select().where(MaintenanceWindow.team == monitor.team_id):
        window_spans = spans(Schedule.of(window), lo, hi)
        if window_spans and monitor.id in covered_ids(window):
            found += window_spans
    return union_seconds(found)
