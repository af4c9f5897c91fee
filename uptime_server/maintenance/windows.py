"""Which monitors a maintenance window covers, and which are in one now.

Apart from ``services.maintenance`` (the API's create/edit/start/end, with its
validation and error shapes) so that the recorder, which asks on every batch,
imports only the models and the schedule rules, not Flask and pydantic: the
recorder runs in a process of its own, and every import is resident memory
there.

**The open-window cache.** The recorder asks before every batch, the API on
every monitor read. The windows are read each time (one indexed query), but
their schedules are evaluated at most once every ``OPEN_TTL`` seconds per
team: each window's open spans over [t, t + OPEN_TTL) are kept, per team,
keyed by the window's whole schedule. An answer for a time in that interval
is exact, and a window created, edited, started, ended or deleted (in any
process) has another schedule, so it is evaluated afresh at once. A schedule
that could not be evaluated within its steps counts as not open, and is not
tried again (nor logged again) for ``COSTLY_TTL``.

Tags are read at each call too: a monitor tagged later is covered from then
on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime, timedelta

from uptime_server.db import Prepared
from uptime_server.maintenance.recurrence import Steps
from uptime_server.maintenance.schedule import QUICK_STEPS, Schedule, Span, evaluate
from uptime_server.models import MaintenanceWindow, Monitor
from uptime_server.models.tags import having_all, tags_by_monitor

OPEN_TTL = timedelta(seconds=5)
COSTLY_TTL = timedelta(minutes=10)


def covered_ids(window: MaintenanceWindow) -> set[int]:
    """The owner's monitors the window covers (ids of deleted monitors dropped)."""
    mine = Monitor.team == window.team_id
    ids: set[int] = set()
    if window.monitor_ids:
        query = Monitor.select(Monitor.id).where(mine & Monitor.id.in_(window.monitor_ids))
        ids |= {mid for (mid,) in query.tuples()}
    if window.tags:
        query = Monitor.select(Monitor.id).where(mine & having_all(Monitor.id, window.tags))
        ids |= {mid for (mid,) in query.tuples()}
    return ids


# The recorder asks these on every batch: the SQL text is built once per database and
# number of teams (or monitors), not by peewee each time.
_WINDOWS_OF = Prepared(
    lambda team_ids: MaintenanceWindow.select().where(MaintenanceWindow.team.in_(team_ids))
)
_OWNERS_OF = Prepared(
    lambda monitor_ids: (
        Monitor.select(Monitor.id, Monitor.team).where(Monitor.id.in_(monitor_ids)).tuples()
    )
)


class _Open:
    """A window's open spans over [since, until)."""

    __slots__ = ("since", "until", "spans")

    def __init__(self, since: datetime, until: datetime, spans: list[Span]) -> None:
        self.since, self.until, self.spans = since, until, spans

    def covers(self, at: datetime) -> bool:
        return any(a <= at < b for a, b in self.spans)


class OpenWindows:
    """Per team, each window's open spans over the next few seconds (see the module doc)."""

    def __init__(self) -> None:
        self._teams: dict[int, dict[Schedule, _Open]] = {}
        self._lock = threading.Lock()

    def open_now(
        self, team_id: int, windows: list[MaintenanceWindow], now: datetime
    ) -> list[MaintenanceWindow]:
        """Those of *windows* (all of *team_id*'s) that are open at *now*."""
        with self._lock:
            known = self._teams.get(team_id, {})
        kept: dict[Schedule, _Open] = {}
        found = []
        for window in windows:
            schedule = Schedule.of(window)
            entry = known.get(schedule)
            if entry is None or not entry.since <= now < entry.until:
                entry = _evaluate(schedule, now)
            kept[schedule] = entry
            if entry.covers(now):
                found.append(window)
        with self._lock:
            self._teams[team_id] = kept
        return found

    def forget(self, team_ids: Iterable[int] | None = None) -> None:
        """Drop what is kept of these teams (None: of everyone)."""
        with self._lock:
            if team_ids is None:
                self._teams.clear()
            for team_id in team_ids or ():
                self._teams.pop(team_id, None)


def _evaluate(schedule: Schedule, now: datetime) -> _Open:
    until = now + OPEN_TTL
    spans, complete = evaluate(schedule, now, until, Steps(QUICK_STEPS))
    if complete:
        return _Open(now, until, spans)
    # Failed closed: what is left (a one-off span, an opening by hand) over longer.
    until = now + COSTLY_TTL
    return _Open(now, until, evaluate(schedule.without_recurrence(), now, until)[0])


OPEN = OpenWindows()


def _open_windows(now: datetime, team_ids: Iterable[int] | None) -> list[MaintenanceWindow]:
    """The windows of *team_ids* (None: everyone's) open at *now*."""
    asked = None if team_ids is None else sorted(set(team_ids))
    query = MaintenanceWindow.select() if asked is None else _WINDOWS_OF.rows(asked)
    by_team: dict[int, list[MaintenanceWindow]] = {}
    for window in query:
        by_team.setdefault(window.team_id, []).append(window)
    OPEN.forget(set(asked or ()) - by_team.keys())  # their last windows deleted
    return [w for team_id, ws in by_team.items() for w in OPEN.open_now(team_id, ws, now)]


def active_monitor_ids(now: datetime, team_ids: Iterable[int] | None = None) -> set[int]:
    """Ids of the monitors in maintenance at *now* (of *team_ids*' windows; None: everyone's)."""
    found: set[int] = set()
    for window in _open_windows(now, team_ids):
        found |= covered_ids(window)
    return found


def in_maintenance(now: datetime, monitor_ids: Iterable[int]) -> set[int]:
    """Those of *monitor_ids* in maintenance at *now*: the recorder's question, per batch.

    The rule of ``covered_ids``, asked of these monitors only: their owners
    in one read, their tags in another when an open window names tags.
    """
    ids = sorted(set(monitor_ids))
    owner_of: dict[int, int] = dict(_OWNERS_OF.rows(ids)) if ids else {}
    windows = _open_windows(now, set(owner_of.values())) if owner_of else []
    tagged = tags_by_monitor(owner_of) if any(w.tags for w in windows) else {}
    found: set[int] = set()
    for window in windows:
        mine = {mid for mid, team_id in owner_of.items() if team_id == window.team_id}
        found |= mine & set(window.monitor_ids or ())
        if window.tags:
            found |= {mid for mid in mine if set(window.tags) <= set(tagged[mid])}
    return found
