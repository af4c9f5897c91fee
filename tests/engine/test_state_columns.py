"""A monitor's recorded state is one dataclass: a new state column is one field.

``checks/state.py: MonitorState`` lists the state columns once; the recorder's
read of a batch (``BatchMonitor``, its SELECT), its write-back and the UPDATE
statements of both dialects are built from those fields. These tests hold that
together: every field is a column of ``monitors``, every column list is the
fields (plus the named extras), and a state with every field set comes back
whole after a write through the recorder, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import fields, replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.outcomes import outcome_at
from uptime_server.checks.outcomes import Plan, Recorded
from uptime_server.checks.state import MonitorState, Transition, moved
from uptime_server.db import database, write_tx
from uptime_server.engine import recorder_sql
from uptime_server.engine.recorder_sql import BATCH_EXTRAS, STATE_COLUMNS, Batch, BatchMonitor
from uptime_server.models import Monitor

FIELDS = [f.name for f in fields(MonitorState)]


def test_every_state_field_is_a_column_of_monitors():
    for name in FIELDS:
        assert name in Monitor._meta.fields, f"MonitorState.{name} is no column of monitors"
        # The SQL names the column by the field's name.
        assert Monitor._meta.fields[name].column_name == name


def test_the_column_lists_are_the_state_fields():
    assert list(STATE_COLUMNS) == FIELDS
    extras = [f.column_name for f in BATCH_EXTRAS]
    assert not set(extras) & set(FIELDS)
    selected = [c.column_name for c in recorder_sql._MONITOR_COLUMNS]
    assert selected == [*extras, *FIELDS]
    # BatchMonitor is the row: the extras by name, then the state.
    assert [f.name for f in fields(BatchMonitor)] == [*extras, "state"]
    assert list(recorder_sql._UPDATE_MONITOR.set[: len(FIELDS)]) == FIELDS


def test_the_update_sets_every_state_column_and_the_versions():
    sql = recorder_sql._UPDATE_MONITOR.sql
    set_clause = sql.split(" SET ", 1)[1].split(" WHERE ")[0]
    assigned = re.findall(r"(\w+) = ", set_clause)
    assert assigned == [*FIELDS, "state_version", "rollup_version"]


def _sample(name: str, hint: Any, i: int, at: datetime) -> Any:
    """A value for the field of type *hint*, unlike its default (its own for each field)."""
    if isinstance(hint, types.UnionType):
        (hint,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if hint is bool:
        return True
    if hint is int:
        return 100 + i
    if hint is str:
        return f"v{i}"
    if hint is datetime:
        return at + timedelta(seconds=i)
    if typing.get_origin(hint) is tuple:
        (item, _ellipsis) = typing.get_args(hint)
        return tuple(_sample(name, item, i + k, at) for k in range(2))
    raise AssertionError(f"MonitorState.{name}: give this test a sample of {hint}")


def _full_state(at: datetime) -> MonitorState:
    hints = typing.get_type_hints(MonitorState)
    state = MonitorState(
        **{name: _sample(name, hints[name], i, at) for i, name in enumerate(FIELDS)}
    )
    for f in fields(MonitorState):
        assert getattr(state, f.name) != getattr(MonitorState(), f.name), f.name
    return state


def _write(plans: list[Plan]) -> bool:
    with database.connection_context(), write_tx():
        return recorder_sql._update_monitors(plans)


def _read(monitor_id: int) -> tuple[MonitorState, int]:
    with database.connection_context(), write_tx():
        row = Batch.load({monitor_id}).monitors[monitor_id]
    return row.state, row.state_version


def test_a_state_with_every_field_set_comes_back_whole(db, make_monitor, clock):
    m = make_monitor("api")
    at = clock.now()
    full = _full_state(at)
    before, version = _read(m.id)
    assert before == MonitorState(status="pending")  # a new monitor: the columns' defaults

    def plan(state: MonitorState, version: int) -> Plan:
        done = Recorded(m.id, None, "online", "pending")
        tr = Transition(state, {"local": "online"})
        return Plan(
            outcome_at(m, at, True), done, True, transition=tr, state=state, version=version
        )

    # Two writes of one monitor in one batch (folded into one row on PostgreSQL):
    # the last one's state is what stays.
    first = MonitorState(status="offline", consecutive_failures=1, last_failure=at)
    assert _write([plan(first, version), plan(full, version + 1)])
    after, new_version = _read(m.id)
    assert after == full
    assert new_version == version + 2
    # The model reads the same columns back (its JSON lists as lists).
    row = Monitor.get_by_id(m.id)
    for name in FIELDS:
        value = getattr(full, name)
        assert getattr(row, name) == (list(value) if isinstance(value, tuple) else value), name


def test_a_write_from_a_stale_version_changes_nothing(db, make_monitor, clock):
    m = make_monitor("api")
    at = clock.now()
    before, version = _read(m.id)
    done = Recorded(m.id, None, "online", "pending")
    full = _full_state(at)
    stale = Plan(outcome_at(m, at, True), done, True, state=full, version=version + 1)
    assert not _write([stale])
    assert _read(m.id) == (before, version)


def test_moved_is_dataclasses_replace(clock):
    full = _full_state(clock.now())
    for name in FIELDS:
        change = {name: getattr(full, name)}
        assert moved(MonitorState(), **change) == replace(MonitorState(), **change)
    assert moved(full) == full
    with pytest.raises(KeyError):
        moved(full, no_such_column=1)
