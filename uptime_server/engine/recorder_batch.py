"""The recorder's set-wise reads and writes for one batch of check runs.

``Batch.load`` reads (and on PostgreSQL locks, in id order, so concurrent
writers never deadlock) everything the state logic needs for the batch's
monitors in four queries; ``Batch.write_runs`` writes the runs, monitor
states and schedule rows with one statement per kind (per page of rows on
PostgreSQL, where each statement is a round trip and a plan). The recorder decides
in between, in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import peewee

from uptime_server.db import database, execute_many, execute_values, is_sqlite
from uptime_server.engine.state import Transition
from uptime_server.models import (
    CHECKED_TYPES,
    AlertSettings,
    Monitor,
    MonitorLocation,
    Notification,
)

if TYPE_CHECKING:
    from uptime_server.engine.recorder import CheckOutcome, Recorded

# What the state logic reads of a monitor; the rest is fetched only for alerts.
_MONITOR_COLUMNS = (
    Monitor.id,
    Monitor.user,
    Monitor.name,
    Monitor.url,
    Monitor.type,
    Monitor.paused,
    Monitor.status,
    Monitor.consecutive_failures,
    Monitor.alerts_suppressed,
    Monitor.offline_since,
    Monitor.cert_expires_at,
    Monitor.state_version,
    Monitor.degraded_response_time,
    Monitor.locations,
    Monitor.created_at,
)
_RUN_CHUNK = 100


@dataclass(slots=True)
class BatchMonitor:
    """The columns of ``_MONITOR_COLUMNS``, in order (cheaper than a model instance)."""

    id: int
    user_id: int
    name: str
    url: str | None
    type: str
    paused: bool
    status: str
    consecutive_failures: int
    alerts_suppressed: bool
    offline_since: datetime | None
    cert_expires_at: datetime | None
    state_version: int
    degraded_response_time: int | None
    locations: list[str]
    created_at: datetime  # with the id, who this monitor is (CheckOutcome)

    @property
    def checks_supported(self) -> bool:
        return self.type in CHECKED_TYPES


@dataclass
class MonitorWrite:
    """A monitor's new state after one run, guarded by the version it was read at."""

    monitor_id: int
    version: int
    outcome: CheckOutcome
    transition: Transition
    offline_since: datetime | None
    cert_expires_at: datetime | None
    passed: bool


@dataclass
class Plan:
    """What the recorder decided for one outcome."""

    outcome: CheckOutcome
    done: Recorded
    record_run: bool = False
    write: MonitorWrite | None = None
    opens: bool = False
    resolves: bool = False
    push_forward: bool = False


class Batch:
    """The batch's monitors as the state logic sees them, moved on run by run."""

    def __init__(self) -> None:
        self.monitors: dict[int, BatchMonitor] = {}
        # monitor → location → [last_status, lease_owner]
        self.slots: dict[int, dict[str, list[str | None]]] = {}
        self.thresholds: dict[int, int] = {}
        self.active: dict[int, Notification] = {}
        self.active_flags: dict[int, bool] = {}

    @classmethod
    def load(cls, monitor_ids: set[int]) -> Batch:
        batch = cls()
        ids = sorted(monitor_ids)
        query = Monitor.select(*_MONITOR_COLUMNS).where(Monitor.id.in_(ids)).order_by(Monitor.id)
        if not is_sqlite():
            # Serialises writers of one monitor on PostgreSQL; SQLite's
            # BEGIN IMMEDIATE already admits one writer at a time.
            query = query.for_update(of=Monitor)
        batch.monitors = {row[0]: BatchMonitor(*row) for row in query.tuples()}
        slots = MonitorLocation.select(
            MonitorLocation.monitor,
            MonitorLocation.location,
            MonitorLocation.last_status,
            MonitorLocation.lease_owner,
        ).where(MonitorLocation.monitor.in_(ids))
        for monitor_id, location, last_status, lease_owner in slots.tuples():
            batch.slots.setdefault(monitor_id, {})[location] = [last_status, lease_owner]
        thresholds = AlertSettings.select(AlertSettings.monitor, AlertSettings.alert_threshold)
        batch.thresholds = dict(thresholds.where(AlertSettings.monitor.in_(ids)).tuples())
        active = Notification.select().where(
            Notification.monitor.in_(ids)
            & (Notification.status == "active")
            & (Notification.type == "downtime")
        )
        batch.active = {n.monitor_id: n for n in active}
        return batch

    def has_active(self, monitor_id: int) -> bool:
        return self.active_flags.get(monitor_id, monitor_id in self.active)

    def location_statuses(self, monitor_id: int, location: str) -> dict[str, str]:
        return {
            loc: status
            for loc, (status, _owner) in self.slots.get(monitor_id, {}).items()
            if status is not None
        }

    def saw_location(
        self, monitor_id: int, location: str, run_status: str, lease_owner: str | None
    ) -> None:
        """Mirror the slot update ``write_runs`` will make (only the lease holder's applies)."""
        slot = self.slots.get(monitor_id, {}).get(location)
        if slot is None or (lease_owner is not None and slot[1] != lease_owner):
            return
        slot[0] = run_status
        if lease_owner is not None:
            slot[1] = None

    # -- writing -------------------------------------------------------------

    def write_runs(self, plans: list[Plan]) -> bool:
        """Runs, monitor states and schedule rows; False if a state guard failed."""
        _insert_runs([p for p in plans if p.record_run])
        writes = [p.write for p in plans if p.write is not None]
        if not self._update_monitors(writes):
            return False
        leased = [p for p in plans if p.record_run and p.outcome.lease_owner is not None]
        adhoc = [p for p in plans if p.record_run and p.outcome.lease_owner is None]
        forward = [p for p in plans if p.push_forward and p.outcome.lease_owner is not None]
        leased_rows = [_slot_params(p, leased=True) for p in leased]
        if is_sqlite():
            execute_many(_UPDATE_SLOT_LEASED, leased_rows)
        elif leased_rows:
            # One claim is one outcome, so a (slot, lease) pair is in the list
            # once; were it twice, the first would have released the lease.
            unique = list({row[3:]: row for row in reversed(leased_rows)}.values())
            execute_values(_PG_UPDATE_SLOTS_LEASED, unique, _PG_SLOT_TEMPLATE)
        execute_many(_UPDATE_SLOT_ADHOC, [_slot_params(p, leased=False) for p in adhoc])
        execute_many(_PUSH_FORWARD, [_forward_params(p) for p in forward])
        return True

    def _update_monitors(self, writes: list[MonitorWrite]) -> bool:
        """Every guarded state update applied? Both backends count the rows changed.

        SQLite runs one guarded UPDATE per write (a loop in C). PostgreSQL gets
        one ``UPDATE … FROM (VALUES …)`` per page, with a monitor's writes of
        this batch folded into one row guarded by the first one's version.
        """
        if not writes:
            return True
        if is_sqlite():
            params = [_monitor_params(w) for w in writes]
            return execute_many(_UPDATE_MONITOR, params, count=True) == len(writes)
        rows = _folded_monitor_params(writes)
        changed, _ = execute_values(_PG_UPDATE_MONITORS, rows, _PG_MONITOR_TEMPLATE)
        return changed == len(rows)


_RUN_COLUMNS = (
    "monitor_id, location, checked_at, status, response_time, status_code, error, attempts"
)


def _insert_runs(plans: list[Plan]) -> None:
    """One multi-row INSERT per chunk; each plan learns its run's id."""
    if not plans:
        return
    if not is_sqlite():
        rows = [_run_params(plan) for plan in plans]
        sql = f"INSERT INTO check_runs ({_RUN_COLUMNS}) VALUES %s RETURNING id"
        _, ids = execute_values(sql, rows, _PG_RUN_TEMPLATE, fetch=True)
        for plan, (run_id,) in zip(plans, ids, strict=True):
            plan.done.run_id = run_id
        return
    for chunk in peewee.chunked(plans, _RUN_CHUNK):
        values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
        params = [value for plan in chunk for value in _run_params(plan)]
        sql = f"INSERT INTO check_runs ({_RUN_COLUMNS}) VALUES {values}"
        # Under the write lock one INSERT takes consecutive rowids.
        last = database.execute_sql(sql, params).lastrowid
        for plan, run_id in zip(chunk, range(last - len(chunk) + 1, last + 1), strict=True):
            plan.done.run_id = run_id


def _run_params(plan: Plan) -> tuple[Any, ...]:
    o = plan.outcome
    return (
        o.monitor_id,
        o.location,
        _dt(o.checked_at),
        plan.done.run_status,
        o.response_time,
        o.status_code,
        o.error,
        o.attempts,
    )


def _dt(value: datetime | None) -> Any:
    return Monitor.last_check.db_value(value)


_UPDATE_MONITOR = (
    "UPDATE monitors SET status = ?, consecutive_failures = ?, alerts_suppressed = ?, "
    "offline_since = ?, response_time = ?, status_code = ?, last_error = ?, last_check = ?, "
    "cert_expires_at = ?, last_success = COALESCE(?, last_success), "
    "last_failure = COALESCE(?, last_failure), state_version = state_version + 1 "
    "WHERE id = ? AND state_version = ?"
)


def _monitor_params(write: MonitorWrite) -> tuple[Any, ...]:
    outcome = write.outcome
    tr = write.transition
    return (
        tr.status,
        tr.consecutive_failures,
        Monitor.alerts_suppressed.db_value(tr.alerts_suppressed),
        _dt(write.offline_since),
        outcome.response_time,
        outcome.status_code,
        outcome.error,
        _dt(outcome.checked_at),
        _dt(write.cert_expires_at),
        _dt(outcome.checked_at) if write.passed else None,
        None if write.passed else _dt(outcome.checked_at),
        write.monitor_id,
        write.version,
    )


# PostgreSQL: the same updates, many rows per statement. The casts type the
# VALUES columns (a column NULL in every row would be text otherwise).
_PG_UPDATE_MONITORS = (
    "UPDATE monitors AS m SET status = v.status, "
    "consecutive_failures = v.consecutive_failures, alerts_suppressed = v.alerts_suppressed, "
    "offline_since = v.offline_since, response_time = v.response_time, "
    "status_code = v.status_code, last_error = v.last_error, last_check = v.last_check, "
    "cert_expires_at = v.cert_expires_at, "
    "last_success = COALESCE(v.last_success, m.last_success), "
    "last_failure = COALESCE(v.last_failure, m.last_failure), "
    "state_version = m.state_version + v.writes "
    "FROM (VALUES %s) AS v(status, consecutive_failures, alerts_suppressed, offline_since, "
    "response_time, status_code, last_error, last_check, cert_expires_at, last_success, "
    "last_failure, id, version, writes) "
    "WHERE m.id = v.id AND m.state_version = v.version"
)
_PG_MONITOR_TEMPLATE = (
    "(%s, %s::integer, %s::boolean, %s::timestamp, %s::integer, %s::integer, %s, "
    "%s::timestamp, %s::timestamp, %s::timestamp, %s::timestamp, %s::integer, %s::integer, "
    "%s::integer)"
)
_PG_RUN_TEMPLATE = "(%s, %s, %s::timestamp, %s, %s::integer, %s::integer, %s, %s::integer)"


def _folded_monitor_params(writes: list[MonitorWrite]) -> list[tuple[Any, ...]]:
    """One row per monitor: what its writes, applied in order, would leave.

    The last write's state; the last non-null success and failure times; the
    first write's version as the guard, and the count of writes to add to it.
    """
    folded: dict[int, list[Any]] = {}
    for write in writes:
        params = _monitor_params(write)
        row = folded.get(write.monitor_id)
        if row is None:
            folded[write.monitor_id] = [*params, 1]
            continue
        success, failure = params[9], params[10]
        row[:9] = params[:9]
        row[9] = success if success is not None else row[9]
        row[10] = failure if failure is not None else row[10]
        row[13] += 1
    return [tuple(row) for row in folded.values()]


# Only the holder of the claim moves the schedule on.
_UPDATE_SLOT_LEASED = (
    "UPDATE monitor_locations SET last_status = ?, last_checked_at = ?, next_check_at = ?, "
    "lease_owner = NULL, lease_expires_at = NULL "
    "WHERE monitor_id = ? AND location = ? AND lease_owner = ?"
)
_UPDATE_SLOT_ADHOC = (
    "UPDATE monitor_locations SET last_status = ?, last_checked_at = ? "
    "WHERE monitor_id = ? AND location = ?"
)
_PG_UPDATE_SLOTS_LEASED = (
    "UPDATE monitor_locations AS ml SET last_status = v.last_status, "
    "last_checked_at = v.checked_at, next_check_at = v.next_check_at, "
    "lease_owner = NULL, lease_expires_at = NULL "
    "FROM (VALUES %s) AS v(last_status, checked_at, next_check_at, monitor_id, location, "
    "lease_owner) "
    "WHERE ml.monitor_id = v.monitor_id AND ml.location = v.location "
    "AND ml.lease_owner = v.lease_owner"
)
_PG_SLOT_TEMPLATE = "(%s, %s::timestamp, %s::timestamp, %s::integer, %s, %s)"
_PUSH_FORWARD = (
    "UPDATE monitor_locations SET next_check_at = ?, lease_owner = NULL, lease_expires_at = NULL "
    "WHERE monitor_id = ? AND location = ? AND lease_owner = ?"
)


def _slot_params(plan: Plan, *, leased: bool) -> tuple[Any, ...]:
    o = plan.outcome
    if leased:
        return (
            plan.done.run_status,
            _dt(o.checked_at),
            _dt(o.next_check_at),
            o.monitor_id,
            o.location,
            o.lease_owner,
        )
    return (plan.done.run_status, _dt(o.checked_at), o.monitor_id, o.location)


def _forward_params(plan: Plan) -> tuple[Any, ...]:
    o = plan.outcome
    return (_dt(o.next_check_at), o.monitor_id, o.location, o.lease_owner)
