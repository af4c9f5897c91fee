"""The recorder's set-wise reads and writes for one batch of check runs.

``Batch.load`` reads (and on PostgreSQL locks, in id order, so concurrent
writers never deadlock) everything the state logic needs for the batch's
monitors in four queries; ``Batch.write_runs`` writes the runs, monitor
states and schedule rows with one statement per kind (per page of rows on
PostgreSQL, where each statement is a round trip and a plan). The recorder decides
in between, in memory.

A monitor's recorded state is ``engine/state.py: MonitorState``; what is read
of a monitor (``BATCH_EXTRAS``, then the state), ``BatchMonitor``, the UPDATE
statements of both dialects with their casts, and the values written back are
all built from its fields, so none of them names a state column.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

import peewee

from uptime_server.db import Prepared, database, execute_many, execute_values, is_sqlite
from uptime_server.engine.dispatcher import give_back
from uptime_server.engine.outcomes import Plan
from uptime_server.engine.state import AlertRules, MonitorState
from uptime_server.models import (
    CHECKED_TYPES,
    AlertSettings,
    CheckRun,
    JSONField,
    Monitor,
    MonitorLocation,
    Notification,
)

# What the recorder reads of a monitor besides its state (engine/state.py's
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
    if not is_sqlite():
        # Serialises writers of one monitor on PostgreSQL; SQLite's
        # BEGIN IMMEDIATE already admits one writer at a time.
        query = query.for_update(of=Monitor)
    return query.tuples()


def _slots_query(ids: list[int]) -> peewee.Query:
    slots = MonitorLocation.select(
        MonitorLocation.monitor,
        MonitorLocation.location,
        MonitorLocation.last_status,
        MonitorLocation.lease_owner,
        MonitorLocation.last_checked_at,
    ).where(MonitorLocation.monitor.in_(ids))
    if not is_sqlite():
        # Who holds each lease is decided here: no claim may take it over
        # between this read and the run's insert (claimers skip locked rows).
        slots = slots.order_by(MonitorLocation.id).for_update(of=MonitorLocation)
    return slots.tuples()


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
        _update_leased_slots(leased)
        execute_many(_UPDATE_SLOT_ADHOC, [_slot_params(p, _ADHOC_SLOT) for p in adhoc])
        execute_many(_UPDATE_RUN_START, [_run_start_params(p) for p in plans if _moves_start(p)])
        give_back(
            [
                (p.outcome.next_check_at, p.outcome.monitor_id, p.outcome.location, owner)
                for p in plans
                if p.push_forward and (owner := p.outcome.lease_owner) is not None
            ]
        )
        return True


# Each statement below is built from one list of (column, PostgreSQL cast)
# pairs, and its parameters from the same list by name, so the SQL, the
# VALUES template and the parameter rows cannot disagree on an order. The casts
# type the VALUES columns (a column NULL in every row would be text otherwise).
Columns = tuple[tuple[str, str], ...]


def _names(columns: Columns) -> list[str]:
    return [name for name, _cast in columns]


def _template(columns: Columns) -> str:
    return "(" + ", ".join(f"%s{cast}" for _name, cast in columns) + ")"


def _dt(value: datetime | None) -> Any:
    """A time as the database takes it: naive UTC (``UTCDateTimeField.db_value``)."""
    if value is not None and value.tzinfo is UTC:
        return value.replace(tzinfo=None)  # the common case, without a method chain
    return Monitor.last_check.db_value(value)


# -- runs ------------------------------------------------------------------------

_RUN = (
    ("monitor_id", ""),
    ("location", ""),
    ("checked_at", "::timestamp"),
    ("status", ""),
    ("response_time", "::integer"),
    ("status_code", "::integer"),
    ("error", ""),
    ("attempts", "::integer"),
    ("kind", ""),
    ("exit_code", "::integer"),
    ("message", ""),
    ("source_ip", ""),
    ("user_agent", ""),
    ("quorum_status", ""),
    ("counted", "::boolean"),
)
_INSERT_RUNS = f"INSERT INTO check_runs ({', '.join(_names(_RUN))}) VALUES "


def _insert_runs(plans: list[Plan]) -> None:
    """One multi-row INSERT per chunk; each plan learns its run's id."""
    if not plans:
        return
    if not is_sqlite():
        rows = [_run_params(plan) for plan in plans]
        sql = _INSERT_RUNS + "%s RETURNING id"
        _, ids = execute_values(sql, rows, _template(_RUN), fetch=True)
        for plan, (run_id,) in zip(plans, ids, strict=True):
            plan.done.run_id = run_id
        return
    row = "(" + ", ".join(["?"] * len(_RUN)) + ")"
    for chunk in peewee.chunked(plans, _RUN_CHUNK):
        params = [value for plan in chunk for value in _run_params(plan)]
        sql = _INSERT_RUNS + ", ".join([row] * len(chunk))
        # Under the write lock one INSERT takes consecutive rowids.
        last = database.execute_sql(sql, params).lastrowid
        for plan, run_id in zip(chunk, range(last - len(chunk) + 1, last + 1), strict=True):
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
    return tuple(values[name] for name in _names(_RUN))


# -- heartbeat runs in progress ------------------------------------------------------

# A start ping opens a run (its time kept until a finishing ping clears it);
# the heartbeat verdict reads it to say "started at T, never finished".
_UPDATE_RUN_START = "UPDATE monitors SET ping_started_at = ? WHERE id = ?"


def _moves_start(plan: Plan) -> bool:
    ping = plan.outcome.ping
    return plan.record_run and ping is not None and ping.run_started_at_change


def _run_start_params(plan: Plan) -> tuple[Any, ...]:
    o = plan.outcome
    assert o.ping is not None
    return (_dt(o.checked_at) if o.ping.kind == "start" else None, o.monitor_id)


# -- monitor states --------------------------------------------------------------


def _pg_cast(field: peewee.Field) -> str:
    """The cast that types a state column in a VALUES list (NULL alone would be text)."""
    if isinstance(field, peewee.CharField | peewee.TextField):  # JSON is text too
        return ""
    casts = {"INT": "::integer", "BOOL": "::boolean", "DATETIME": "::timestamp"}
    return casts[field.field_type]  # a new kind of state column names its cast here


def _to_db(field: peewee.Field) -> Any:
    """How a state field's value is written (None: as it is)."""
    if isinstance(field, peewee.DateTimeField):
        return _dt
    if isinstance(field, JSONField | peewee.BooleanField):
        return field.db_value  # JSON takes the state's tuples as lists
    return None


# A run sets every state column; then the guard.
_MONITOR_SET = tuple((name, _pg_cast(getattr(Monitor, name))) for name in STATE_COLUMNS)
_MONITOR_GUARD = (("id", "::integer"), ("version", "::integer"))
_MONITOR = (*_MONITOR_SET, *_MONITOR_GUARD)
_STATE_VALUES = attrgetter(*STATE_COLUMNS)
_STATE_TO_DB = tuple(
    (i, to_db)
    for i, name in enumerate(STATE_COLUMNS)
    if (to_db := _to_db(getattr(Monitor, name))) is not None
)

_UPDATE_MONITOR = (
    "UPDATE monitors SET "
    + ", ".join(
        [
            *(f"{c} = ?" for c in _names(_MONITOR_SET)),
            "state_version = state_version + 1",
            # The roll-ups this batch writes (rollups.add_runs, told so).
            "rollup_version = rollup_version + 1",
        ]
    )
    + " WHERE id = ? AND state_version = ?"
)
# PostgreSQL: the same updates, many rows per statement; a monitor's writes of
# one batch are folded into one row that adds ``writes`` to its version.
_PG_MONITOR = (*_MONITOR, ("writes", "::integer"))
_PG_UPDATE_MONITORS = (
    "UPDATE monitors AS m SET "
    + ", ".join(
        [
            *(f"{c} = v.{c}" for c in _names(_MONITOR_SET)),
            "state_version = m.state_version + v.writes",
            "rollup_version = m.rollup_version + 1",
        ]
    )
    + f" FROM (VALUES %s) AS v({', '.join(_names(_PG_MONITOR))}) "
    "WHERE m.id = v.id AND m.state_version = v.version"
)


def _update_monitors(plans: list[Plan]) -> bool:
    """Every guarded state update applied? Both backends count the rows changed.

    SQLite runs one guarded UPDATE per write (a loop in C). PostgreSQL gets
    one ``UPDATE … FROM (VALUES …)`` per page, with a monitor's writes of
    this batch folded into one row guarded by the first one's version.
    """
    if not plans:
        return True
    if is_sqlite():
        params = [tuple(_monitor_values(p)) for p in plans]
        return execute_many(_UPDATE_MONITOR, params, count=True) == len(plans)
    rows = _folded_monitor_params(plans)
    changed, _ = execute_values(_PG_UPDATE_MONITORS, rows, _template(_PG_MONITOR))
    return changed == len(rows)


def _monitor_values(plan: Plan) -> list[Any]:
    """The parameters of one guarded update, in ``_MONITOR``'s order."""
    assert plan.state is not None
    values = list(_STATE_VALUES(plan.state))
    for i, to_db in _STATE_TO_DB:
        values[i] = to_db(values[i])
    values.append(plan.outcome.monitor_id)
    values.append(plan.version)
    return values


def _folded_monitor_params(plans: list[Plan]) -> list[tuple[Any, ...]]:
    """One row per monitor: what its writes, applied in order, would leave.

    The last write's state; the first write's version as the guard, and the
    count of writes to add to it.
    """
    folded: dict[int, list[Any]] = {}
    state_end = len(_MONITOR_SET)
    for plan in plans:
        values = _monitor_values(plan)
        row = folded.get(plan.outcome.monitor_id)
        if row is None:
            folded[plan.outcome.monitor_id] = [*values, 1]
            continue
        row[:state_end] = values[:state_end]
        row[-1] += 1
    return [tuple(row) for row in folded.values()]


def _state_writes(plans: list[Plan]) -> list[Plan]:
    """The plans whose monitor state ``write_runs`` updates."""
    return [p for p in plans if p.transition is not None]


def versions_moved(plans: list[Plan]) -> set[int]:
    """The monitors whose ``rollup_version`` ``write_runs`` moved with their state."""
    return {p.outcome.monitor_id for p in _state_writes(plans)}


# -- schedule rows ---------------------------------------------------------------

# Only the holder of the claim moves the schedule on (and drops the lease).
_LEASED_SLOT = (
    ("last_status", ""),
    ("last_checked_at", "::timestamp"),
    ("next_check_at", "::timestamp"),
    ("monitor_id", "::integer"),
    ("location", ""),
    ("lease_owner", ""),
)
_SLOT_KEY = ("monitor_id", "location", "lease_owner")
_UPDATE_SLOT_LEASED = (
    "UPDATE monitor_locations SET "
    + ", ".join(f"{c} = ?" for c in _names(_LEASED_SLOT) if c not in _SLOT_KEY)
    + ", lease_owner = NULL, lease_expires_at = NULL "
    + "WHERE "
    + " AND ".join(f"{c} = ?" for c in _SLOT_KEY)
)
_PG_UPDATE_SLOTS_LEASED = (
    "UPDATE monitor_locations AS ml SET "
    + ", ".join(f"{c} = v.{c}" for c in _names(_LEASED_SLOT) if c not in _SLOT_KEY)
    + ", lease_owner = NULL, lease_expires_at = NULL "
    + f"FROM (VALUES %s) AS v({', '.join(_names(_LEASED_SLOT))}) WHERE "
    + " AND ".join(f"ml.{c} = v.{c}" for c in _SLOT_KEY)
)
# An ad-hoc run records its status; a "test now" leaves the schedule alone,
# a heartbeat's finishing ping (with a next_check_at) sets its next deadline.
_ADHOC_SLOT = (
    ("last_status", ""),
    ("last_checked_at", ""),
    ("next_check_at", ""),
    ("monitor_id", ""),
    ("location", ""),
)
_UPDATE_SLOT_ADHOC = (
    "UPDATE monitor_locations SET last_status = ?, last_checked_at = ?, "
    "next_check_at = COALESCE(?, next_check_at) WHERE monitor_id = ? AND location = ?"
)


def _update_leased_slots(plans: list[Plan]) -> None:
    rows = [_slot_params(p, _LEASED_SLOT) for p in plans]
    if is_sqlite():
        execute_many(_UPDATE_SLOT_LEASED, rows)
    elif rows:
        # One claim is one outcome, so a (slot, lease) pair is in the list
        # once; were it twice, the first would have released the lease.
        key = [_names(_LEASED_SLOT).index(c) for c in _SLOT_KEY]
        unique = list({tuple(row[i] for i in key): row for row in reversed(rows)}.values())
        execute_values(_PG_UPDATE_SLOTS_LEASED, unique, _template(_LEASED_SLOT))


def _slot_params(plan: Plan, columns: Columns) -> tuple[Any, ...]:
    o = plan.outcome
    values = {
        "last_status": plan.done.run_status,
        "last_checked_at": _dt(o.checked_at),
        "next_check_at": _dt(o.next_check_at),
        "monitor_id": o.monitor_id,
        "location": o.location,
        "lease_owner": o.lease_owner,
    }
    return tuple(values[name] for name in _names(columns))
