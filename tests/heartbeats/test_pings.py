"""Heartbeat monitors under the injected clock: pings, deadlines, verdicts, history."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.heartbeats.conftest import URL, history, make_heartbeat, ping_path, shown, sweep
from uptime_server.auth import ping_tokens
from uptime_server.models import CheckRun, Notification


def notes(user: Any) -> list[tuple[str, str, str]]:
    data = user.get("/api/v1/notifications").get_json()["data"]
    return [(n["type"], n["status"], n["message"]) for n in reversed(data)]


def test_it_is_online_on_time_and_never_judged_before_the_deadline(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    assert shown(alice, m["id"])["next_deadline"] == "2026-11-22T13:10:00Z"  # created + 1h + 10m
    clock.advance(minutes=59)
    assert anon.get(ping_path(m)).status_code == 200
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "online"
    assert monitor["next_deadline"] == "2026-11-22T14:09:00Z"
    clock.advance(minutes=69)  # one minute before the deadline
    sweep(scheduler, clock)
    assert shown(alice, m["id"])["status"] == "online"
    assert [run["kind"] for run in history(alice, m["id"])] == ["success"]


def test_a_late_ping_within_grace_keeps_it_online(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=65)  # expected at 13:00, grace until 13:10
    sweep(scheduler, clock)
    assert anon.get(ping_path(m)).status_code == 200
    clock.advance(minutes=6)  # past the first deadline: it was moved on by the ping
    sweep(scheduler, clock)
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "online"
    assert monitor["next_deadline"] == "2026-11-22T14:15:00Z"
    assert notes(alice) == []


def test_overdue_goes_offline_with_one_downtime_and_recovers_on_a_ping(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=71)
    sweep(scheduler, clock)
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "offline"
    assert monitor["last_error"] == "no ping by 2026-11-22T13:10:00Z"
    # Each missed slot is one failed run; the next is judged an hour on.
    assert monitor["next_deadline"] == "2026-11-22T14:10:00Z"
    sweep(scheduler, clock)
    assert len(history(alice, m["id"])) == 1
    clock.advance(minutes=20)
    assert anon.post(ping_path(m)).status_code == 200
    assert shown(alice, m["id"])["status"] == "online"
    assert notes(alice) == [
        ("downtime", "resolved", "backup is DOWN: no ping by 2026-11-22T13:10:00Z"),
        ("recovery", "resolved", "backup is UP again after 20m"),
    ]


def test_missed_slots_count_toward_the_alert_threshold(
    alice: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    alice.put(f"{URL}/{m['id']}/alerts", json={"alert_threshold": 2})
    clock.advance(minutes=71)
    sweep(scheduler, clock)
    assert shown(alice, m["id"])["status"] == "offline"
    assert notes(alice) == []
    clock.advance(minutes=60)
    sweep(scheduler, clock)
    assert [n[:2] for n in notes(alice)] == [("downtime", "active")]


def test_a_stall_judges_once_and_skips_the_missed_slots(
    alice: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    clock.advance(hours=10)
    sweep(scheduler, clock)
    sweep(scheduler, clock)
    assert len(history(alice, m["id"])) == 1
    assert shown(alice, m["id"])["next_deadline"] == "2026-11-22T22:10:00Z"


def test_fail_goes_offline_at_once_with_the_message(alice: Any, anon: Any, clock: Any) -> None:
    m = make_heartbeat(alice)
    response = anon.post(ping_path(m, "fail"), data=b"disk full\nmore detail")
    assert response.status_code == 200
    assert response.get_data(as_text=True).strip() == "OK"
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "offline"
    assert monitor["last_error"] == "failure reported: disk full"
    assert notes(alice) == [("downtime", "active", "backup is DOWN: failure reported: disk full")]
    [run] = history(alice, m["id"])
    assert (run["kind"], run["status"], run["message"]) == (
        "fail",
        "offline",
        "disk full more detail",  # stored through printable(): a newline is a space
    )


@pytest.mark.parametrize(
    ("code", "status", "error"),
    [("0", "online", None), ("1", "offline", "exit code 1"), ("255", "offline", "exit code 255")],
)
def test_exit_codes(alice: Any, anon: Any, code: str, status: str, error: str | None) -> None:
    m = make_heartbeat(alice)
    assert anon.get(ping_path(m, code)).status_code == 200
    monitor = shown(alice, m["id"])
    assert (monitor["status"], monitor["last_error"]) == (status, error)
    [run] = history(alice, m["id"])
    assert (run["kind"], run["exit_code"]) == ("exit", int(code))


def test_an_unknown_kind_or_exit_code_is_404(alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    for suffix in ("256", "-1", "done", "1000"):
        assert_error(anon.get(ping_path(m, suffix)), 404, "NOT_FOUND")
    assert history(alice, m["id"]) == []


def test_start_then_hang(alice: Any, anon: Any, clock: Any, scheduler: Any) -> None:
    m = make_heartbeat(alice)
    clock.advance(minutes=59)
    assert anon.get(ping_path(m, "start")).status_code == 200
    assert shown(alice, m["id"])["status"] == "pending"  # a start changes no state
    clock.advance(minutes=12)
    sweep(scheduler, clock)
    monitor = shown(alice, m["id"])
    assert monitor["status"] == "offline"
    assert monitor["last_error"] == "started at 2026-11-22T12:59:00Z, never finished"


def test_start_then_finish_records_the_duration(alice: Any, anon: Any, clock: Any) -> None:
    m = make_heartbeat(alice)
    anon.get(ping_path(m, "start"))
    clock.advance(seconds=90)
    anon.get(ping_path(m, "0"))
    monitor = shown(alice, m["id"])
    assert (monitor["status"], monitor["response_time"]) == ("online", 90_000)
    runs = history(alice, m["id"])
    assert [(r["kind"], r["response_time"]) for r in runs] == [("exit", 90_000), ("start", None)]
    # Finished: the next success has no start to measure from.
    clock.advance(minutes=30)
    anon.get(ping_path(m))
    assert shown(alice, m["id"])["response_time"] is None


def test_log_is_a_history_entry_only(alice: Any, anon: Any, clock: Any, scheduler: Any) -> None:
    m = make_heartbeat(alice)
    anon.get(ping_path(m))
    clock.advance(minutes=5)
    response = anon.post(ping_path(m, "log"), data="x" * 300, headers={"User-Agent": "backup.sh/1"})
    assert response.status_code == 200
    monitor = shown(alice, m["id"])
    assert (monitor["status"], monitor["last_check"]) == ("online", "2026-11-22T12:00:00Z")
    entry = history(alice, m["id"])[0]
    assert entry["kind"] == "log"
    assert entry["status"] == "online"
    assert entry["message"] == "x" * 200  # the start of the message
    assert (entry["source_ip"], entry["user_agent"]) == ("127.0.0.1", "backup.sh/1")
    assert monitor["last_ping"]["kind"] == "log"
    stats = alice.get(f"{URL}/{m['id']}/stats").get_json()["data"]
    assert stats["checks"]["total"] == 1  # the log counts in no figure


def test_the_body_is_kept_up_to_10_kb(alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    anon.post(ping_path(m, "log"), data=b"a" * 20_000)
    [message] = [run.message for run in CheckRun.select()]
    assert message == "a" * 10_240


def test_head_and_post_ping_too(alice: Any, anon: Any, clock: Any) -> None:
    m = make_heartbeat(alice)
    assert anon.head(ping_path(m)).status_code == 200
    clock.advance(minutes=1)
    assert anon.post(ping_path(m, "start")).status_code == 200
    assert [r["kind"] for r in history(alice, m["id"])] == ["start", "success"]


def test_an_unknown_token_is_404_in_the_error_shape(alice: Any, anon: Any) -> None:
    make_heartbeat(alice)
    for path in ("/ping/not-a-token", "/ping/not-a-token/fail", "/ping/" + "x" * 200):
        assert_error(anon.get(path), 404, "NOT_FOUND")
    assert CheckRun.select().count() == 0


def test_a_paused_monitor_answers_200_and_records_nothing(
    alice: Any, anon: Any, clock: Any, scheduler: Any
) -> None:
    m = make_heartbeat(alice)
    alice.post(f"{URL}/{m['id']}/pause")
    for suffix in ("", "fail", "start", "log"):
        assert anon.get(ping_path(m, suffix)).status_code == 200
    clock.advance(hours=3)
    sweep(scheduler, clock)
    assert CheckRun.select().count() == 0
    assert shown(alice, m["id"])["status"] == "pending"
    # Resumed, it counts afresh from now.
    alice.post(f"{URL}/{m['id']}/resume")
    assert shown(alice, m["id"])["next_deadline"] == "2026-11-22T16:10:00Z"


def test_rotation_kills_the_old_token_at_once(alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    response = alice.post(f"{URL}/{m['id']}/ping-token")
    assert response.status_code == 200
    rotated = response.get_json()["data"]
    assert rotated["ping_url"] != m["ping_url"]
    assert shown(alice, m["id"])["ping_url"] == rotated["ping_url"]
    assert_error(anon.get(ping_path(m)), 404, "NOT_FOUND")
    assert anon.get(ping_path(rotated)).status_code == 200


def test_tokens_are_long_random_and_stored_as_a_hash(alice: Any, settings: Any) -> None:
    from uptime_server.models import Monitor

    first, second = make_heartbeat(alice), make_heartbeat(alice)
    token = first["ping_url"].rsplit("/", 1)[1]
    assert len(token) >= 22  # >= 128 bits of urlsafe base64
    assert token != second["ping_url"].rsplit("/", 1)[1]
    row = Monitor.get_by_id(first["id"])
    # Neither column holds the token, in plain or inside anything else; the
    # hash is its SHA-256 and only the server's key opens the sealed copy.
    assert row.ping_token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in row.ping_token_sealed
    assert token.encode() not in base64.urlsafe_b64decode(row.ping_token_sealed)
    assert ping_tokens.unseal(row.ping_token_sealed, settings.secret_key) == token
    assert ping_tokens.unseal(row.ping_token_sealed, "another key") is None


def test_another_user_can_neither_see_nor_rotate_the_token(alice: Any, bob: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    assert_error(bob.get(f"{URL}/{m['id']}"), 404, "MONITOR_NOT_FOUND")
    assert_error(bob.post(f"{URL}/{m['id']}/ping-token"), 404, "MONITOR_NOT_FOUND")
    listed = bob.get(URL).get_json()["data"]
    assert listed == []
    assert anon.get(ping_path(m)).status_code == 200  # still alice's token


def test_only_heartbeats_have_a_token(alice: Any) -> None:
    from tests.api.shapes import create

    mid = create(alice)
    assert shown(alice, mid)["ping_url"] is None
    assert_error(alice.post(f"{URL}/{mid}/ping-token"), 409, "MONITOR_TYPE_NOT_SUPPORTED")
    m = make_heartbeat(alice)
    assert_error(alice.post(f"{URL}/{m['id']}/test"), 409, "MONITOR_TYPE_NOT_SUPPORTED")


def test_pings_need_no_session_and_no_origin_check(alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    response = alice.post(ping_path(m), headers={"Origin": "https://evil.example"})
    assert response.status_code == 200
    assert Notification.select().count() == 0
