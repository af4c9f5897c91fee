"""Issue 29, item 1: one user's pathological maintenance windows and heartbeat crons,
written straight into the database where the API would refuse them, do not hold up
another user's pings and API calls; and no schedule is evaluated under the write lock.

The bounds are generous (a second): they separate "stalled behind the write lock"
(seconds, before this change: bob's windows were walked from their DTSTART inside
the recorder's transaction, and his cron edit stepped over 70 days of minutes inside
the API's) from "fine". Figures: ``make bench-pings`` (bench/README.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import create
from tests.heartbeats.conftest import URL, make_heartbeat, ping_path, shown
from tests.outcomes import outcome
from uptime_server import db as dbmod
from uptime_server.engine.recorder import Recorder
from uptime_server.heartbeats.schedule import HeartbeatSchedule
from uptime_server.maintenance import schedule as maintenance_schedule
from uptime_server.models import MaintenanceWindow, Monitor, User

BOUND = 1.0  # seconds


def pathological_windows(owner_id: int, monitor_id: int, now: Any) -> list[MaintenanceWindow]:
    """Bob's windows, as the API would refuse them (each took seconds per evaluation)."""
    schedules = [
        {"rrule": "FREQ=SECONDLY", "duration": 60},  # from its creation, 20 days back
        {"rrule": "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", "duration": 3600},  # never
        {"cron": "* * * * *", "duration": 30 * 86400},
    ]
    made = now - timedelta(days=20)
    return [
        MaintenanceWindow.create(
            user=owner_id,
            team=User.get_by_id(owner_id).personal_team_id,
            title="stall",
            monitor_ids=[monitor_id],
            created_at=made,
            updated_at=made,
            **schedule,
        )
        for schedule in schedules
    ]


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def test_a_neighbours_schedules_do_not_hold_up_pings_and_api_calls(
    alice: Any, bob: Any, anon: Any, app: Any, clock: Any
) -> None:
    mine = make_heartbeat(alice)
    web = create(alice)
    theirs = make_heartbeat(bob, period=None, cron="0 3 * * *")
    seventy_days_back = clock.now() - timedelta(days=70)
    Monitor.update(created_at=seventy_days_back).where(Monitor.id == theirs["id"]).execute()
    pathological_windows(bob.user.id, theirs["id"], clock.now())

    answers: dict[str, Any] = {}

    def neighbour() -> None:
        # A cron edit counts from the monitor's creation, 70 days of minutes back.
        edit = bob.put(f"{URL}/{theirs['id']}", json={"cron": "* * * * *"})
        answers["edit"] = edit.status_code
        answers["ping"] = app.test_client().get(ping_path(theirs)).status_code

    worker = threading.Thread(target=neighbour)
    worker.start()
    time.sleep(0.3)  # bob's edit, then ping, under way (before: walked under the write lock)
    ping, ping_s = timed(lambda: anon.get(ping_path(mine)))
    listing, list_s = timed(lambda: alice.get(URL))
    edit, edit_s = timed(lambda: alice.put(f"{URL}/{web}", json={"name": "renamed"}))
    worker.join(120)

    assert ping.status_code == 200 and ping_s < BOUND, ping_s
    assert listing.status_code == 200 and list_s < BOUND, list_s
    assert edit.status_code == 200 and edit_s < BOUND, edit_s
    assert shown(alice, mine["id"])["last_check"] is not None  # alice's ping was recorded
    # Bob's own requests are answered too, and his cron edit took effect.
    assert answers == {"edit": 200, "ping": 200}
    expected = (clock.now() + timedelta(minutes=1, seconds=600)).replace(second=0)
    assert shown(bob, theirs["id"])["next_deadline"] == expected.isoformat().replace("+00:00", "Z")


@pytest.fixture
def under_lock(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether a transaction was open each time a schedule was evaluated."""
    seen: list[bool] = []
    walk = maintenance_schedule.recurring_starts
    expected_after = HeartbeatSchedule.expected_after

    def walked(*args: Any) -> Any:
        seen.append(dbmod.database.in_transaction())
        return walk(*args)

    def counted(self: HeartbeatSchedule, moment: Any) -> Any:
        seen.append(dbmod.database.in_transaction())
        return expected_after(self, moment)

    monkeypatch.setattr(maintenance_schedule, "recurring_starts", walked)
    monkeypatch.setattr(HeartbeatSchedule, "expected_after", counted)
    return seen


def test_the_recorder_evaluates_windows_before_its_transaction(
    make_monitor: Any, alice: Any, clock: Any, settings: Any, under_lock: list[bool]
) -> None:
    monitor = make_monitor("db")
    window = {"title": "nightly", "monitor_ids": [monitor.id], "duration": 3600}
    made = alice.post("/api/v1/maintenance", json={**window, "rrule": "FREQ=HOURLY"})
    assert made.status_code == 201, made.get_json()
    under_lock.clear()
    [done] = Recorder(settings).record([outcome(monitor, clock, False)], now=clock.now())
    assert done.run_id is not None and under_lock and not any(under_lock)


def test_a_heartbeat_schedule_is_evaluated_before_the_apis_transaction(
    alice: Any, clock: Any, under_lock: list[bool]
) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=5)
    for change in (
        {"cron": "*/5 * * * *", "period": None},
        {"period": 600, "cron": None, "timezone": None},
    ):
        assert alice.put(f"{URL}/{m['id']}", json=change).status_code == 200
    assert alice.post(f"{URL}/{m['id']}/pause").status_code == 200
    assert alice.post(f"{URL}/{m['id']}/resume").status_code == 200
    assert under_lock and not any(under_lock)
