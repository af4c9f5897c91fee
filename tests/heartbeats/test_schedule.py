"""Heartbeat schedules: period and cron, time zones and DST, stalls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.heartbeats.conftest import URL, make_heartbeat, ping_path, shown, sweep
from uptime_server.heartbeats import schedule as heartbeat_schedule
from uptime_server.heartbeats.schedule import HeartbeatSchedule
from uptime_server.maintenance.recurrence import Failures
from uptime_server.models import Monitor


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


BERLIN_3AM = HeartbeatSchedule(grace=600, cron="0 3 * * *", timezone="Europe/Berlin")


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        # CET (UTC+1) before the spring change, CEST (UTC+2) after it.
        ("2026-03-28T01:30:00Z", "2026-03-28T02:00:00Z"),
        ("2026-03-28T02:00:00Z", "2026-03-29T01:00:00Z"),
        # And back in October: 03:00 CEST on the 24th, 03:00 CET on the 25th.
        ("2026-10-24T00:30:00Z", "2026-10-24T01:00:00Z"),
        ("2026-10-24T01:00:00Z", "2026-10-25T02:00:00Z"),
    ],
)
def test_cron_fires_at_local_time_across_dst(after: str, expected: str) -> None:
    assert BERLIN_3AM.expected_after(at(after)) == at(expected)


def test_a_local_time_that_does_not_exist_fires_after_the_gap() -> None:
    half_past_two = HeartbeatSchedule(grace=0, cron="30 2 * * *", timezone="Europe/Berlin")
    # 02:30 does not exist on 2026-03-29 in Berlin: the clocks jump to 03:00 (01:00Z).
    assert half_past_two.expected_after(at("2026-03-28T12:00:00Z")) == at("2026-03-29T01:00:00Z")


def test_period_and_grace() -> None:
    schedule = HeartbeatSchedule(grace=60, period=300)
    assert schedule.deadline_after(at("2026-01-01T00:00:00Z")) == at("2026-01-01T00:06:00Z")


def test_after_a_stall_the_next_deadline_is_ahead_of_now() -> None:
    schedule = HeartbeatSchedule(grace=60, period=3600)
    missed = at("2026-01-01T01:01:00Z")
    now = at("2026-01-03T05:30:00Z")
    assert schedule.next_deadline(missed, now) == at("2026-01-03T06:01:00Z")


def test_a_changed_schedule_never_makes_a_monitor_overdue_at_once() -> None:
    schedule = HeartbeatSchedule(grace=0, period=3600)
    now = at("2026-01-02T00:30:00Z")
    assert schedule.first_deadline(at("2026-01-01T00:00:00Z"), now) == at("2026-01-02T01:00:00Z")


def test_a_cron_monitor_across_the_dst_change(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    clock.set(at("2026-03-27T12:00:00Z"))
    m = make_heartbeat(alice, period=None, cron="0 3 * * *", timezone="Europe/Berlin", grace=600)
    monitor = shown(alice, m["id"])
    assert (monitor["cron"], monitor["timezone"]) == ("0 3 * * *", "Europe/Berlin")
    assert monitor["next_deadline"] == "2026-03-28T02:10:00Z"  # 03:00 CET + 10 min
    clock.set(at("2026-03-28T02:05:00Z"))
    anon.get(ping_path(m))
    # The next 03:00 is CEST: an hour earlier in UTC.
    assert shown(alice, m["id"])["next_deadline"] == "2026-03-29T01:10:00Z"
    clock.set(at("2026-03-29T01:09:00Z"))
    sweep(scheduler, clock)
    assert shown(alice, m["id"])["status"] == "online"
    clock.set(at("2026-03-29T01:11:00Z"))
    sweep(scheduler, clock)
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "offline"
    assert monitor["last_error"] == "no ping by 2026-03-29T01:10:00Z"
    assert monitor["next_deadline"] == "2026-03-30T01:10:00Z"


def test_editing_the_schedule_moves_the_deadline(alice: Any, clock: Any) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=10)
    response = alice.put(f"{URL}/{m['id']}", json={"period": 86400, "grace": 3600})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["next_deadline"] == "2026-11-23T13:00:00Z"
    response = alice.put(f"{URL}/{m['id']}", json={"period": None, "cron": "*/15 * * * *"})
    data = response.get_json()["data"]
    assert (data["timezone"], data["next_deadline"]) == ("UTC", "2026-11-22T13:15:00Z")


def test_a_heartbeat_turned_http_is_checked_at_once_and_back_waits(alice: Any, clock: Any) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=5)
    change = {"type": "http", "url": "http://127.0.0.1:9/", "period": None, "grace": None}
    data = alice.put(f"{URL}/{m['id']}", json=change).get_json()["data"]
    assert (data["status"], data["next_check_at"]) == ("pending", "2026-11-22T12:05:00Z")
    assert data["ping_url"] is None
    back = {"type": "heartbeat", "url": None, "period": 600, "grace": 60}
    data = alice.put(f"{URL}/{m['id']}", json=back).get_json()["data"]
    assert data["next_deadline"] == "2026-11-22T12:11:00Z"  # from creation: 12:10, +1 min
    assert data["ping_url"] == m["ping_url"]  # its token kept


def _stepped(schedule: HeartbeatSchedule, missed: datetime, now: datetime) -> datetime:
    """The next deadline as found slot by slot (the way it was, and is not, computed)."""
    grace = timedelta(seconds=schedule.grace)
    expected = schedule.expected_after(missed - grace)
    while expected + grace <= now:
        expected = schedule.expected_after(expected)
    return expected + grace


@pytest.mark.parametrize(
    "schedule",
    [
        HeartbeatSchedule(grace=60, period=3600),
        HeartbeatSchedule(grace=0, period=300),
        HeartbeatSchedule(grace=600, cron="*/15 * * * *"),
        HeartbeatSchedule(grace=600, cron="0 3 * * *", timezone="Europe/Berlin"),
    ],
    ids=["hourly", "5 min, no grace", "cron 15 min", "cron Berlin"],
)
def test_the_next_deadline_is_counted_out_not_stepped(schedule: HeartbeatSchedule) -> None:
    missed = at("2026-03-20T03:10:00Z")
    for late in (0, 59, 60, 61, 899, 900, 3600, 86400 * 9 + 17, 86400 * 11):
        now = missed + timedelta(seconds=late)
        assert schedule.next_deadline(missed, now) == _stepped(schedule, missed, now), late


def test_a_minutely_cron_70_days_on_is_one_step(monkeypatch: Any) -> None:
    """A cron edit counts from the last success: no walk over the 100,800 slots since."""
    calls = []
    real = HeartbeatSchedule.expected_after
    monkeypatch.setattr(
        HeartbeatSchedule, "expected_after", lambda self, t: calls.append(t) or real(self, t)
    )
    schedule = HeartbeatSchedule(grace=60, cron="* * * * *")
    since, now = at("2026-01-01T00:00:00Z"), at("2026-03-12T10:00:30Z")
    assert schedule.first_deadline(since, now) == at("2026-03-12T10:01:00Z")
    assert len(calls) == 2


def test_a_cron_without_a_next_fire_fails_closed_a_day_on(caplog: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(heartbeat_schedule, "FAILURES", Failures(heartbeat_schedule.log))
    schedule = HeartbeatSchedule(grace=600, cron="0 0 30 2 *", monitor_id=77)
    moment = at("2026-03-20T03:10:00Z")
    assert schedule.deadline_after(moment) == moment + timedelta(days=1, seconds=600)
    now = moment + timedelta(days=3)
    assert schedule.next_deadline(moment, now) == now + timedelta(days=1)
    assert "heartbeat monitor 77: cron '0 0 30 2 *' gives no next fire" in caplog.text
    assert caplog.text.count("heartbeat monitor 77:") == 1  # once, not on every question


def test_a_stored_cron_that_never_fires_still_takes_pings(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    """Stored without the API's check: pings are recorded (500 before), and it is judged
    a day after each one."""
    m = make_heartbeat(alice)
    Monitor.update(period=None, cron="0 0 30 2 *", timezone="UTC").where(
        Monitor.id == m["id"]
    ).execute()
    response = anon.get(ping_path(m))
    assert response.status_code == 200, response.get_data(as_text=True)
    deadline = clock.now() + timedelta(days=1, seconds=600)
    assert shown(alice, m["id"])["next_deadline"] == deadline.isoformat().replace("+00:00", "Z")
    clock.set(deadline + timedelta(seconds=1))
    sweep(scheduler, clock)
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "offline"
    assert monitor["next_deadline"] > monitor["last_check"]
