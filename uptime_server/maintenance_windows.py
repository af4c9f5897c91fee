"""Which monitors a maintenance window covers, and which are in one now.

Apart from ``maintenance_service`` (the API's create/edit/start/end, with its
validation and error shapes) so that the recorder, which asks on every batch,
imports only the models and the schedule rules, not Flask and pydantic: the
recorder runs in a process of its own, and every import is resident memory
there.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from uptime_server.db import Prepared
from uptime_server.maintenance_schedule import Schedule, is_open
from uptime_server.models import MaintenanceWindow, Monitor
from uptime_server.monitor_tags import having_all


def covered_ids(window: MaintenanceWindow) -> set[int]:
    """The owner's monitors the window covers (ids of deleted monitors dropped)."""
    mine = Monitor.user == window.user_id
    ids: set[int] = set()
    if window.monitor_ids:
        query = Monitor.select(Monitor.id).where(mine & Monitor.id.in_(window.monitor_ids))
        ids |= {mid for (mid,) in query.tuples()}
    if window.tags:
        query = Monitor.select(Monitor.id).where(mine & having_all(Monitor.id, window.tags))
        ids |= {mid for (mid,) in query.tuples()}
    return ids


# The recorder asks this on every batch: the SQL text is built once per database and
# number of users, not by peewee each time.
_WINDOWS_OF = Prepared(
    lambda user_ids: MaintenanceWindow.select().where(MaintenanceWindow.user.in_(user_ids))
)


def active_monitor_ids(now: datetime, user_ids: Iterable[int] | None = None) -> set[int]:
    """Ids of the monitors in maintenance at *now* (of *user_ids*' windows; None: everyone's)."""
    query = (
        MaintenanceWindow.select() if user_ids is None else _WINDOWS_OF.rows(sorted(set(user_ids)))
    )
    found: set[int] = set()
    for window in query:
        if is_open(Schedule.of(window), now):
            found |= covered_ids(window)
    return found
