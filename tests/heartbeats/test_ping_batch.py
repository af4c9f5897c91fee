"""A batch of pings recorded by the recorder: one token lookup, one answer per ping.

The answering threads hand pings over as ``PingIn`` tuples; ``engine.pings.record_pings``
(in the database worker's child, or in process) looks the batch's tokens up, draws
each ping's outcome in arrival order and records them together.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.heartbeats.conftest import URL, history, make_heartbeat, ping_path, shown
from tests.heartbeats.test_ping_sink import GatedRecorder, pinging, queued
from uptime_server.auth.ping_tokens import token_hash
from uptime_server.engine.dispatcher import ClaimRequest
from uptime_server.engine.ping_sink import PingSink
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.worker import DatabaseWorker, InProcess
from uptime_server.heartbeats import batch as pings
from uptime_server.models import CheckRun, Monitor
from uptime_server.wsgi.context import app_state


def token_of(monitor: dict[str, Any]) -> str:
    return urlsplit(monitor["ping_url"]).path.rsplit("/", 1)[-1]


def ping_in(
    monitor: dict[str, Any] | str, at: datetime, kind: str = "success", **facts: Any
) -> pings.PingIn:
    """The ``PingIn`` the answering thread hands over for a ping of *monitor* (or a raw token)."""
    token = monitor if isinstance(monitor, str) else token_of(monitor)
    return pings.PingIn(
        token_hash(token),
        kind,
        facts.get("exit_code"),
        facts.get("body", b""),
        facts.get("source_ip", "127.0.0.1"),
        facts.get("user_agent", "cron/1"),
        at,
    )


def runs_of(monitor: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = CheckRun.select().where(CheckRun.monitor == monitor["id"]).order_by(CheckRun.id)
    return [(r.kind, r.exit_code, r.status, r.response_time, r.message) for r in rows]


def test_a_batch_answers_unknown_paused_and_known_pings_one_by_one(
    alice: Any, settings: Any, clock: Any
) -> None:
    known, other, paused = (make_heartbeat(alice, name=n) for n in ("a", "b", "c"))
    alice.post(f"{URL}/{paused['id']}/pause")
    at = clock.now()
    batch = [
        ping_in(known, at, "start"),
        ping_in("no-such-token", at),
        ping_in(paused, at),
        ping_in(other, at, "exit", exit_code=4, body=b"disk full"),
        ping_in(known, at, "log", body=b"halfway"),
    ]
    answers = pings.record_pings(Recorder(settings), batch, now=at)
    assert answers == [pings.RECORDED, pings.UNKNOWN, pings.PAUSED, pings.RECORDED, pings.RECORDED]
    assert runs_of(known) == [
        ("start", None, "pending", None, None),
        ("log", None, "pending", None, "halfway"),
    ]
    assert runs_of(other) == [("exit", 4, "offline", None, "disk full")]
    assert runs_of(paused) == []
    assert CheckRun.select().count() == 3


def test_a_start_and_its_finish_in_one_batch_give_the_run_its_duration(
    alice: Any, settings: Any, clock: Any
) -> None:
    m = make_heartbeat(alice)
    at = clock.now()
    batch = [
        ping_in(m, at, "start"),
        ping_in(m, at + timedelta(seconds=30), "log"),  # a log keeps the run open
        ping_in(m, at + timedelta(seconds=90), "exit", exit_code=0),
        ping_in(m, at + timedelta(seconds=95)),  # the run is closed: no duration
    ]
    answers = pings.record_pings(Recorder(settings), batch, now=at + timedelta(seconds=95))
    assert answers == [pings.RECORDED] * 4
    assert [(kind, rt) for kind, _, _, rt, _ in runs_of(m)] == [
        ("start", None),
        ("log", None),
        ("exit", 90_000),
        ("success", None),
    ]
    assert Monitor.get_by_id(m["id"]).ping_started_at is None


def test_a_start_left_open_by_a_batch_is_seen_by_the_next(
    alice: Any, settings: Any, clock: Any
) -> None:
    m = make_heartbeat(alice)
    at = clock.now()
    recorder = Recorder(settings)
    assert pings.record_pings(recorder, [ping_in(m, at, "start")], now=at) == [pings.RECORDED]
    later = at + timedelta(minutes=2)
    assert pings.record_pings(recorder, [ping_in(m, later, "fail")], now=later) == [pings.RECORDED]
    assert [(kind, rt) for kind, _, _, rt, _ in runs_of(m)] == [("start", None), ("fail", 120_000)]


def test_a_token_rotated_between_two_pings_answers_unknown_for_the_old_one(
    alice: Any, anon: Any, settings: Any, clock: Any
) -> None:
    m = make_heartbeat(alice)
    at = clock.now()
    recorder = Recorder(settings)
    assert pings.record_pings(recorder, [ping_in(m, at)], now=at) == [pings.RECORDED]
    rotated = alice.post(f"{URL}/{m['id']}/ping-token").get_json()["data"]
    assert token_of(rotated) != token_of(m)
    batch = [ping_in(m, at, "fail"), ping_in(rotated, at, "log", body=b"new token")]
    assert pings.record_pings(recorder, batch, now=at) == [pings.UNKNOWN, pings.RECORDED]
    assert [kind for kind, *_ in runs_of(m)] == ["success", "log"]
    # The same over HTTP, through the dispatcher.
    assert anon.get(ping_path(m)).status_code == 404
    assert anon.get(ping_path(rotated)).status_code == 200


def test_a_monitor_deleted_before_the_write_answers_unknown(
    alice: Any, settings: Any, clock: Any
) -> None:
    m = make_heartbeat(alice)
    at = clock.now()

    class DeletingRecorder(Recorder):
        """Deletes the monitor between the token lookup and the batch's transaction."""

        def record(self, outcomes: Any, *, now: Any) -> Any:
            assert alice.delete(f"{URL}/{m['id']}").status_code == 200
            return super().record(outcomes, now=now)

    answers = pings.record_pings(DeletingRecorder(settings), [ping_in(m, at)], now=at)
    assert answers == [pings.UNKNOWN]
    assert CheckRun.select().count() == 0


def test_a_ping_whose_outcome_fails_answers_500_and_the_rest_are_recorded(
    alice: Any, anon: Any, settings: Any, clock: Any
) -> None:
    broken, fine = make_heartbeat(alice, name="broken"), make_heartbeat(alice, name="fine")
    # A cron expression the API would refuse, as a stand-in for any monitor
    # whose outcome raises.
    Monitor.update(period=None, cron="61 * * * *").where(Monitor.id == broken["id"]).execute()
    at = clock.now()
    answers = pings.record_pings(
        Recorder(settings), [ping_in(broken, at), ping_in(fine, at)], now=at
    )
    assert answers == [pings.FAILED, pings.RECORDED]
    assert (runs_of(broken), len(runs_of(fine))) == ([], 1)
    response = anon.get(ping_path(broken))
    assert (response.status_code, response.get_json()["error"]["code"]) == (500, "INTERNAL_ERROR")


def test_the_recorder_child_and_the_in_process_path_write_the_same_rows(
    alice: Any, settings: Any, clock: Any
) -> None:
    def job(m: dict[str, Any], at: datetime) -> list[pings.PingIn]:
        return [
            ping_in(m, at, "start"),
            ping_in("unknown-token", at),
            ping_in(m, at + timedelta(seconds=5), "log", body=b"step 1\x00"),
            ping_in(m, at + timedelta(seconds=61), "exit", exit_code=2, body=b"oops\nmore"),
            ping_in(m, at + timedelta(seconds=70), user_agent="x" * 600, source_ip=None),
        ]

    at = clock.now()
    local, remote = make_heartbeat(alice, name="local"), make_heartbeat(alice, name="remote")
    in_process = pings.record_pings(Recorder(settings), job(local, at), now=at)
    # As the daemon starts the ping writer's: a child that records and makes no claims.
    child = DatabaseWorker(settings, claims=False)
    try:
        in_child = child.record_pings(job(remote, at), at)
        with pytest.raises(RuntimeError, match="without claims"):
            child.claim(ClaimRequest("local", ("http",), at, 1, "w/1"))
    finally:
        child.close()
    clock.advance(seconds=70)
    assert in_process == in_child == [pings.RECORDED, pings.UNKNOWN] + [pings.RECORDED] * 3

    def seen(m: dict[str, Any]) -> tuple[Any, ...]:
        runs = [
            {k: v for k, v in r.items() if k not in ("id", "monitor_id")}
            for r in history(alice, m["id"])
        ]
        monitor = shown(alice, m["id"])
        kept = ("status", "last_error", "response_time", "next_deadline", "last_ping")
        return runs, {k: monitor[k] for k in kept}

    assert seen(local) == seen(remote)
    runs, monitor = seen(remote)
    assert [(r["kind"], r["response_time"]) for r in runs] == [
        ("success", None),
        ("exit", 61_000),
        ("log", None),
        ("start", None),
    ]
    assert monitor["status"] == "online"


def test_a_start_and_its_finish_queued_in_one_commit_through_the_sink(
    app: Any, alice: Any, settings: Any, clock: Any
) -> None:
    """Both pings wait behind one commit and are written by the next: the finish sees the start."""
    sink = PingSink(InProcess(settings), clock)
    sink.start()
    app_state(app).services["ping_sink"] = sink
    try:
        blocker, m = make_heartbeat(alice, name="blocker"), make_heartbeat(alice)
        sink.records.recorder = recorder = GatedRecorder(settings)
        answers: list[int] = []
        threads = [pinging(app, ping_path(blocker), answers)]
        assert recorder.entered.wait(30)
        threads.append(pinging(app, ping_path(m, "start"), answers))
        queued(sink, 1)
        clock.advance(seconds=42)
        threads.append(pinging(app, ping_path(m), answers))
        queued(sink, 2)
        recorder.release.set()
        for t in threads:
            t.join(30)
        assert answers == [200, 200, 200]
        assert recorder.batches == [1, 2]
        assert [(kind, rt) for kind, _, _, rt, _ in runs_of(m)] == [
            ("start", None),
            ("success", 42_000),
        ]
    finally:
        sink.close()
