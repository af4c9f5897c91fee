"""An edit racing the engine: what the engine wrote between the edit's read and its commit stays.

The PUT view reads the monitor, validates the merged configuration, then
writes. Each test runs those steps by hand (``get_owned``, then the engine's
write, then ``update_monitor``) so the interleaving is exact, on SQLite and
on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import create
from tests.conftest import acting_of
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.errors import ApiError
from uptime_server.models import Monitor, MonitorLocation, Notification
from uptime_server.schemas.monitor_config import parse_monitor_update
from uptime_server.services import monitors as monitor_service

URL = "/api/v1/monitors"
ENGINE_STATE = (
    "status",
    "consecutive_failures",
    "offline_since",
    "state_version",
    "last_check",
    "last_failure",
    "last_error",
    "status_code",
    "paused",
    "paused_at",
    "pause_reason",
    "alerts_suppressed",
)


def edit(monitor: Monitor, patch: dict[str, Any], settings: Any, clock: Any) -> Monitor:
    cfg = parse_monitor_update(monitor_service.config_of(monitor), patch, settings)
    acting = acting_of(monitor.user)
    return monitor_service.update_monitor(acting, monitor, cfg, now=clock.now(), settings=settings)


def state_of(monitor_id: int) -> dict[str, Any]:
    row = Monitor.get_by_id(monitor_id)
    return {name: getattr(row, name) for name in ENGINE_STATE}


def test_the_engine_state_written_during_an_edit_survives_it(alice, settings, clock):
    mid = create(alice)
    read_for_edit = monitor_service.get_owned(alice.acting, mid)

    clock.advance(60)
    Recorder(settings).record([outcome(read_for_edit, clock, False)], now=clock.now())
    clock.advance(60)
    Recorder(settings).record([outcome(read_for_edit, clock, False)], now=clock.now())
    engine_wrote = state_of(mid)
    assert (engine_wrote["status"], engine_wrote["consecutive_failures"]) == ("offline", 2)

    clock.advance(5)
    returned = edit(read_for_edit, {"name": "renamed", "retry_count": 1}, settings, clock)

    assert state_of(mid) == engine_wrote
    row = Monitor.get_by_id(mid)
    assert (row.name, row.retry_count, row.updated_at) == ("renamed", 1, clock.now())
    # The answer is the monitor as stored, engine state included.
    assert (returned.status, returned.state_version) == ("offline", engine_wrote["state_version"])
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["status"] == "offline"
    [incident] = list(Notification.select().where(Notification.monitor == mid))
    assert incident.status == "active"


def test_a_pause_during_an_edit_survives_it(alice, settings, clock):
    mid = create(alice)
    read_for_edit = monitor_service.get_owned(alice.acting, mid)
    monitor_service.pause_monitor(
        alice.acting, monitor_service.get_owned(alice.acting, mid), "deploy", now=clock.now()
    )

    edit(read_for_edit, {"check_interval": 120}, settings, clock)

    row = Monitor.get_by_id(mid)
    assert (row.paused, row.pause_reason, row.paused_at) == (True, "deploy", clock.now())
    assert row.check_interval == 120


def test_an_edit_of_a_monitor_deleted_meanwhile_is_not_found(alice, settings, clock):
    mid = create(alice)
    read_for_edit = monitor_service.get_owned(alice.acting, mid)
    monitor_service.delete_monitor(alice.acting, read_for_edit, now=clock.now())

    with pytest.raises(ApiError) as raised:
        edit(read_for_edit, {"name": "ghost"}, settings, clock)

    assert raised.value.code == "MONITOR_NOT_FOUND"
    assert Monitor.select().count() == 0
    assert MonitorLocation.select().count() == 0


def test_a_type_change_keeps_the_engine_state_written_during_the_edit(alice, settings, clock):
    # Before issue 12 a move to ping (then unchecked) started the monitor over;
    # every type is checked now, so the state the engine wrote stays.
    mid = create(alice)
    read_for_edit = monitor_service.get_owned(alice.acting, mid)
    Recorder(settings).record([outcome(read_for_edit, clock, False)], now=clock.now())
    recorded = state_of(mid)

    edit(read_for_edit, {"type": "ping", "url": "ping://127.0.0.1"}, settings, clock)

    assert state_of(mid) == recorded
    assert Monitor.get_by_id(mid).type == "ping"
    assert Notification.get(Notification.monitor == mid).status == "active"


def test_no_configuration_field_is_an_engine_column():
    assert not set(monitor_service.CONFIG_FIELDS) & {*ENGINE_STATE, "response_time", "last_success"}
