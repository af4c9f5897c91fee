"""The recorder's set-wise reads and writes for one batch of check runs.

``Batch.load`` reads (and on PostgreSQL locks, in id order, so concurrent
writers never deadlock) everything the state logic needs for the batch's
monitors in four queries; ``Batch.write_runs`` writes the runs, monitor
states and schedule rows with one ``db.bulk`` statement per kind, run for
all the batch's rows (pipelined on PostgreSQL: one round trip). The recorder
decides in between, in memory.

A monitor's recorded state is ``checks/state.py: MonitorState``; what is read
of a monitor (``BATCH_EXTRAS``, then the state), ``BatchMonitor``, the UPDATE
statement and the values written back are all built from its fields, so none
of them names a state column.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

import peewee

from uptime_server.checks.outcomes import Plan
from uptime_server.checks.state import AlertRules, MonitorState
from uptime_server.db import Prepared, database, locked
from uptime_server.db.bulk import Insert, Update
from uptime_server.engine.dispatcher import give_back
from uptime_server.models import (
    CHECKED_TYPES,
    AlertSettings,
    CheckRun,
    JSONField,
    Monitor,
    MonitorLocation,
    Notification,
)

# What the recorder reads of a monitor besides its state (checks/state.py's
# MonitorState, whose fields follow these in the row); the rest is fetched only
# for alerts.
BATCH_EXTRAS = (
    Monitor.id,
    Monitor.user,
    Monitor.name,
    Monitor.url,
    Monitor.type,
    Monitor.paused,
    Monitor.state_version,
    Monitor.degraded_response_time,
    Monitor.locations,
    Monitor.created_at,
    Monitor.check_interval,
)
STATE_COLUMNS = tuple(f.name for f in fields(MonitorState))
_MONITOR_COLUMNS = (*BATCH_EXTRAS, *(getattr(Monitor, name) for name in STATE_COLUMNS))
_RUN_CHUNK = 100


# The batch's reads, their SQL written once per batch size (db.Prepared): a
# ping's batch is small, and building these four statements cost more than
# running them.
def _monitors_query(ids: list[int]) -> peewee.Query:
    query = Monitor.select(*_MONITOR_COLUMNS).where(Monitor.id.in_(ids)).order_by(Monitor.id)
    # Serialises writers of one monitor.
    return locked(query, of=Monitor).tuples()


def _slots_query(ids: list[int]) -> peewee.Query:
    slots = MonitorLocation.select(
        MonitorLocation.monitor,
        MonitorLocation.location,
        MonitorLocation.last_status,
        MonitorLocation.lease_owner,
        MonitorLocation.last_checked_at,
    ).where(MonitorLocation.monitor.in_(ids))
    # Who holds each lease is decided here: no claim may take it over
    # between this read and the run's insert (claimers skip locked rows).
    return locked(slots, MonitorLocation.id, of=MonitorLocation).tuples()


def _rules_query(ids: list[int]) -> peewee.Query:
    return (
        AlertSettings.select(
            AlertSettings.monitor,
            AlertSettings.cert_expiry_days,
            AlertSettings.alert_threshold,
            AlertSettings.recovery_threshold,
            AlertSettings.flap_threshold,
            AlertSettings.flap_window,
            AlertSettings.min_failed_locations,
        )
        .where(AlertSettings.monitor.in_(ids))
        .tuples()
    )


def _active_query(ids: list[int]) -> peewee.Query:
    return Notification.select().where(
        Notification.monitor.in_(ids)
        & (Notification.status == "active")
        & (Notification.type == "downtime")
    )


_MONITORS = Prepared(_monitors_query)
_SLOTS = Prepared(_slots_query)
_RULES = Prepared(_rules_query)
_ACTIVE = Prepared(_active_query)


@dataclass(slots=True)
class BatchMonitor:
    """A row of ``_MONITOR_COLUMNS``: ``BATCH_EXTRAS`` in order, then ``state``."""

    id: int
    user_id: int
    name: str
    url: str | None
    type: str
    paused: bool
    state_version: int
    degraded_response_time: int | None
    locations: list[str]
    created_at: datetime  # with the id, who this monitor is (CheckOutcome)
    check_interval: int
    state: MonitorState

    @property
    def checks_supported(self) -> bool:
        return self.type in CHECKED_TYPES


# The state's JSON lists come back as tuples (a frozen state holds no list).
_STATE_TUPLES = tuple(
    i for i, name in enumerate(STATE_COLUMNS) if isinstance(getattr(Monitor, name), JSONField)
)


def _batch_monitor(row: tuple[Any, ...]) -> BatchMonitor:
    values = list(row[len(BATCH_EXTRAS) :])
    for i in _STATE_TUPLES:
        values[i] = tuple(values[i] or ())
    return BatchMonitor(*row[: len(BATCH_EXTRAS)], MonitorState(*values))


class Batch:
    """The batch's monitors as the state logic sees them, moved on run by run."""

    def __init__(self) -> None:
        self.monitors: dict[int, BatchMonitor] = {}
        # monitor → location → [last_status, lease_owner, last_checked_at]
        self.slots: dict[int, dict[str, list[Any]]] = {}
        self.rules: dict[int, AlertRules] = {}
        self.cert_days: dict[int, list[int]] = {}  # alert_settings.cert_expiry_days
        self.active: dict[int, Notification] = {}
        self.active_flags: dict[int, bool] = {}
        self.maintenance: set[int] = set()  # monitors in a maintenance window now

    @classmethod
    def load(cls, monitor_ids: set[int]) -> Batch:
        batch = cls()
        ids = sorted(monitor_ids)
        batch.monitors = {row[0]: _batch_monitor(row) for row in _MONITORS.rows(ids)}
        for monitor_id, location, *slot in _SLOTS.rows(ids):
            batch.slots.setdefault(monitor_id, {})[location] = slot
        for monitor_id, cert_days, *rule in _RULES.rows(ids):
            batch.rules[monitor_id] = AlertRules(*rule)
            batch.cert_days[monitor_id] = cert_days
        batch.active = {n.monitor_id: n for n in _ACTIVE.rows(ids)}
        return batch

    def has_active(self, monitor_id: int) -> bool:
        return self.active_flags.get(monitor_id, monitor_id in self.active)

    def location_statuses(self, monitor_id: int) -> dict[str, str]:
        return {
            loc: status
            for loc, (status, _owner, _at) in self.slots.get(monitor_id, {}).items()
            if status is not None
        }

    def location_checked_at(self, monitor_id: int) -> dict[str, datetime]:
        return {
            loc: at
            for loc, (status, _owner, at) in self.slots.get(monitor_id, {}).items()
            if status is not None and at is not None
        }

    def holds(self, monitor_id: int, location: str, lease_owner: str) -> bool:
        """Whether *lease_owner* still holds the check's lease (as this batch has moved it)."""
        slot = self.slots.get(monitor_id, {}).get(location)
        return slot is not None and slot[1] == lease_owner

    def saw_location(
        self,
        monitor_id: int,
        location: str,
        run_status: str,
        lease_owner: str | None,
        checked_at: datetime,
    ) -> None:
        """Mirror the slot update ``write_runs`` will make (only the lease holder's applies)."""
        slot = self.slots.get(monitor_id, {}).get(location)
        if slot is None or (lease_owner is not None and slot[1] != lease_owner):
            return
        slot[0] = run_status
        slot[2] = checked_at
        if lease_owner is not None:
            slot[1] = None

    # -- writing -------------------------------------------------------------

    def write_runs(self, plans: list[Plan]) -> bool:
        """Runs, monitor states and schedule rows; False if a state guard failed.

        Each monitor whose state is written also gets a new ``rollup_version``
        in the same row update (``versions_moved``): one row version fewer per
        check than a second UPDATE from ``rollups.add_runs``.
        """
        _insert_runs([p for p in plans if p.record_run])
        if not _update_monitors(_state_writes(plans)):
            return False
        # An uncounted run leaves the location's status alone (its lease is
        # given back below, with the push-forwards).
        counted = [p for p in plans if p.record_run and p.outcome.counted]
        leased = [p for p in counted if p.outcome.lease_owner is not None]
        adhoc = [p for p in counted if p.outcome.lease_owner is None and not p.outcome.history_only]
        _UPDATE_SLOT_LEASED.run([_slot_params(p, _LEASED_PARAMS) for p in leased])
        _UPDATE_SLOT_ADHOC.run([_slot_params(p, _ADHOC_PARAMS) for p in adhoc])
        _UPDATE_RUN_START.run([_run_start_params(p) for p in plans if _moves_start(p)])
        give_back(
            [
                (p.outcome.next_check_at, p.outcome.monitor_id, p.outcome.location, owner)
                for p in plans
                if p.push_forward and (owner := p.outcome.lease_owner) is not None
            ]
        )
        return True


# Each statement below is built from one list of columns, and its parameters
# from the same list by name, so the SQL and the parameter rows cannot
# disagree on an order.


def _dt(value: datetime | None) -> Any:
    """A time as the database takes it: naive UTC (``UTCDateTimeField.db_value``)."""
    if value is not None and value.tzinfo is UTC:
        return value.replace(tzinfo=None)  # the common case, without a method chain
    return Monitor.last_check.db_value(value)


# -- runs ------------------------------------------------------------------------

_RUN = (
    "monitor_id",
    "location",
    "checked_at",
    "status",
    "response_time",
    "status_code",
    "error",
    "attempts",
    "kind",
    "exit_code",
    "message",
    "source_ip",
    "user_agent",
    "quorum_status",
    "counted",
)
_INSERT_RUNS = Insert("check_runs", _RUN)


def _insert_runs(plans: list[Plan]) -> None:
    """Insert the plans' runs; each plan learns its run's id."""
    ids = _INSERT_RUNS.ids([_run_params(plan) for plan in plans], rows_per_statement=_RUN_CHUNK)
    for plan, run_id in zip(plans, ids, strict=True):
        plan.done.run_id = run_id


def _run_params(plan: Plan) -> tuple[Any, ...]:
    o = plan.outcome
    values = {
        "monitor_id": o.monitor_id,
        "location": o.location,
        "checked_at": _dt(o.checked_at),
        "status": plan.done.run_status,
        "response_time": o.response_time,
        "status_code": o.status_code,
        "error": o.error,
        "attempts": o.attempts,
        "kind": o.ping.kind if o.ping else None,
        "exit_code": o.ping.exit_code if o.ping else None,
        "message": o.ping.message if o.ping else None,
        "source_ip": o.ping.source_ip if o.ping else None,
        "user_agent": o.ping.user_agent if o.ping else None,
        "quorum_status": plan.done.monitor_status,
        "counted": CheckRun.counted.db_value(o.counted),
    }
    return tuple([values[name] for name in _RUN])


# -- heartbeat runs in progress ------------------------------------------------------

# A start ping opens a run (its time kept until a finishing ping clears it);
# the heartbeat verdict reads it to say "started at T, never finished".
_UPDATE_RUN_START = Update("monitors", ("ping_started_at",), ("id",))


def _moves_start(plan: Plan) -> bool:
    ping = plan.outcome.ping
    return plan.record_run and ping is not None and ping.run_started_at_change


def _run_start_params(plan: Plan) -> tuple[Any, ...]:
    o = plan.outcome
    assert o.ping is not None
    return (_dt(o.checked_at) if o.ping.kind == "start" else None, o.monitor_id)


# -- monitor states --------------------------------------------------------------


def _to_db(field: peewee.Field) -> Any:
    """How a state field's value is written (None: as it is)."""
    if isinstance(field, peewee.DateTimeField):
        return _dt
    if isinstance(field, JSONField | peewee.BooleanField):
        return field.db_value  # JSON takes the state's tuples as lists
    return None


_STATE_VALUES = attrgetter(*STATE_COLUMNS)
_STATE_TO_DB = tuple(
    (i, to_db)
    for i, name in enumerate(STATE_COLUMNS)
    if (to_db := _to_db(getattr(Monitor, name))) is not None
)

# A run sets every state column, guarded by the version it was decided on. A
# monitor's writes of one batch run in order, each guarded by the version the
# one before left.
_UPDATE_MONITOR = Update(
    "monitors",
    (
        *STATE_COLUMNS,
        "state_version = state_version + 1",
        # The roll-ups this batch writes (rollups.add_runs, told so).
        "rollup_version = rollup_version + 1",
    ),
    ("id", "state_version"),
)


def _update_monitors(plans: list[Plan]) -> bool:
    """Every guarded state update applied? (the rows changed, counted)"""
    if not plans:
        return True
    params = [_monitor_values(p) for p in plans]
    return _UPDATE_MONITOR.run(params, count=True) == len(plans)


def _monitor_values(plan: Plan) -> list[Any]:
    """The parameters of one guarded update: the state, then the id and version."""
    assert plan.state is not None
    values = list(_STATE_VALUES(plan.state))
    for i, to_db in _STATE_TO_DB:
        values[i] = to_db(values[i])
    values.append(plan.outcome.monitor_id)
    values.append(plan.version)
    return values


def _state_writes(plans: list[Plan]) -> list[Plan]:
    """The plans whose monitor state ``write_runs`` updates."""
    return [p for p in plans if p.transition is not None]


def versions_moved(plans: list[Plan]) -> set[int]:
    """The monitors whose ``rollup_version`` ``write_runs`` moved with their state."""
    return {p.outcome.monitor_id for p in _state_writes(plans)}


# -- schedule rows ---------------------------------------------------------------

# Only the holder of the claim moves the schedule on (and drops the lease).
_LEASED_SLOT = ("last_status", "last_checked_at", "next_check_at")
_SLOT_KEY = ("monitor_id", "location", "lease_owner")
_UPDATE_SLOT_LEASED = Update(
    "monitor_locations",
    (*_LEASED_SLOT, "lease_owner = NULL", "lease_expires_at = NULL"),
    _SLOT_KEY,
)
# An ad-hoc run records its status; a "test now" leaves the schedule alone,
# a heartbeat's finishing ping (with a next_check_at) sets its next deadline.
_ADHOC_SLOT = ("last_status", "last_checked_at", "next_check_at = COALESCE(?, next_check_at)")
_ADHOC_KEY = ("monitor_id", "location")
_UPDATE_SLOT_ADHOC = Update("monitor_locations", _ADHOC_SLOT, _ADHOC_KEY)
# The values each takes, in its order.
_LEASED_PARAMS = (*_LEASED_SLOT, *_SLOT_KEY)
_ADHOC_PARAMS = ("last_status", "last_checked_at", "next_check_at", *_ADHOC_KEY)


def _slot_params(plan: Plan, names: tuple[str, ...]) -> tuple[Any, ...]:
    o = plan.outcome
    values = {
        "last_status": plan.done.run_status,
        "last_checked_at": _dt(o.checked_at),
        "next_check_at": _dt(o.next_check_at),
        "monitor_id": o.monitor_id,
        "location": o.location,
        "lease_owner": o.lease_owner,
    }
    return tuple([values[name] for name in names])


# -- dependencies: read only for a batch that opens, resolves or releases ---------

# One statement: the chains above and below the monitors asked about (two
# recursive walks of monitor_dependencies), the edges among them, and the
# open downtimes of every monitor met, with its name. Rows are tagged: 'e'
# (child, parent) or 'n' (monitor, notification id, suppressed_by, name).
_DEPENDENCIES_SQL = """
WITH RECURSIVE
  up_(id) AS (
    SELECT depends_on_id FROM monitor_dependencies WHERE monitor_id IN ({ids})
    UNION
    SELECT d.depends_on_id FROM monitor_dependencies d JOIN up_ ON d.monitor_id = up_.id
  ),
  down_(id) AS (
    SELECT monitor_id FROM monitor_dependencies WHERE depends_on_id IN ({ids})
    UNION
    SELECT d.monitor_id FROM monitor_dependencies d JOIN down_ ON d.depends_on_id = down_.id
  ),
  nodes(id) AS (
    SELECT id FROM up_ UNION SELECT id FROM down_
    UNION SELECT id FROM monitors WHERE id IN ({ids})
  )
SELECT 'e', d.monitor_id, d.depends_on_id, NULL, NULL
  FROM monitor_dependencies d
  WHERE d.monitor_id IN (SELECT id FROM nodes) AND d.depends_on_id IN (SELECT id FROM nodes)
UNION ALL
SELECT 'n', n.monitor_id, n.id, n.suppressed_by_id, m.name
  FROM notifications n JOIN monitors m ON m.id = n.monitor_id
  WHERE n.monitor_id IN (SELECT id FROM nodes)
    AND n.status = 'active' AND n.type = 'downtime'
"""


@dataclass
class Dependencies:
    """The chains through a batch's event monitors, and who on them is down.

    ``parents``: child → its parents, for every monitor above or below the
    ones asked about. ``down``: monitor → its open downtime's (id,
    suppressed_by); the recorder moves it on as it writes events.
    ``names``: the names of the monitors that are down.
    """

    parents: dict[int, set[int]]
    down: dict[int, tuple[int, int | None]]
    names: dict[int, str]

    @classmethod
    def load(cls, monitor_ids: set[int]) -> Dependencies:
        ids = sorted(monitor_ids)
        marks = ", ".join([database.param] * len(ids))
        sql = _DEPENDENCIES_SQL.format(ids=marks)
        deps = cls({}, {}, {})
        for tag, a, b, suppressed_by, name in database.execute_sql(sql, ids * 3).fetchall():
            if tag == "e":
                deps.parents.setdefault(a, set()).add(b)
            else:
                deps.down[a] = (b, suppressed_by)
                deps.names[a] = name
        return deps
