"""The daemon's ping sink: group commit, and a ping answered only once it is committed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.heartbeats.conftest import history, make_heartbeat, ping_path, shown
from uptime_server.engine.ping_sink import PingSink
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.worker import DatabaseWorker, InProcess
from uptime_server.models import CheckRun
from uptime_server.wsgi.context import app_state


@pytest.fixture
def sink(app: Any, settings: Any, clock: Any) -> Iterator[PingSink]:
    made = PingSink(InProcess(settings), clock)
    made.start()
    app_state(app).services["ping_sink"] = made
    yield made
    made.close()


class GatedRecorder(Recorder):
    """A recorder whose first commit starts, then waits for ``release``."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.entered, self.release = threading.Event(), threading.Event()
        self.batches: list[int] = []

    def record(self, outcomes: list[Any], *, now: Any) -> Any:
        if not self.batches:
            self.entered.set()
            assert self.release.wait(30)
        self.batches.append(len(outcomes))
        return super().record(outcomes, now=now)


def pinging(app: Any, path: str, answers: list[int]) -> threading.Thread:
    """A ping sent from its own thread, its status appended to *answers*."""
    thread = threading.Thread(
        target=lambda: answers.append(app.test_client().get(path).status_code)
    )
    thread.start()
    return thread


def queued(sink: PingSink, count: int) -> None:
    with sink._ready:
        assert sink._ready.wait_for(lambda: len(sink._pending.pings) == count, 30)


class FailingRecorder(Recorder):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.failing = True

    def record(self, outcomes: list[Any], *, now: Any) -> Any:
        if self.failing:
            raise OSError("database unavailable")
        return super().record(outcomes, now=now)


def test_an_answered_ping_is_in_the_database_when_answered(
    sink: PingSink, alice: Any, anon: Any
) -> None:
    m = make_heartbeat(alice)
    for count in (1, 2, 3):
        assert anon.get(ping_path(m)).status_code == 200
        # Read at once, on this thread's own connection: the writer has committed.
        assert CheckRun.select().count() == count
    assert sink.commits == 3


def test_pings_arriving_during_a_commit_share_the_next(
    sink: PingSink, app: Any, alice: Any, settings: Any
) -> None:
    monitors = [make_heartbeat(alice) for _ in range(5)]
    sink.records.recorder = recorder = GatedRecorder(settings)
    answers: list[int] = []
    threads = [pinging(app, ping_path(monitors[0]), answers)]
    assert recorder.entered.wait(30)  # the first ping's commit is under way
    threads += [pinging(app, ping_path(m), answers) for m in monitors[1:]]
    queued(sink, 4)
    assert answers == []  # none answered before its commit
    recorder.release.set()
    for t in threads:
        t.join(30)
    assert answers == [200] * 5
    assert recorder.batches == [1, 4]
    assert CheckRun.select().count() == 5


def test_a_ping_that_cannot_be_committed_answers_503_and_records_nothing(
    sink: PingSink, alice: Any, anon: Any, settings: Any
) -> None:
    m = make_heartbeat(alice)
    sink.records.recorder = recorder = FailingRecorder(settings)
    response = anon.post(ping_path(m, "fail"), data=b"disk full")
    assert_error(response, 503, "SERVICE_UNAVAILABLE")
    assert response.headers["Retry-After"] == "1"
    assert CheckRun.select().count() == 0
    recorder.failing = False  # the writer lives on: the client's retry is recorded
    assert anon.post(ping_path(m, "fail"), data=b"disk full").status_code == 200
    assert CheckRun.select().count() == 1


def test_close_commits_what_is_queued_then_refuses_pings(
    sink: PingSink, app: Any, alice: Any, settings: Any
) -> None:
    m = make_heartbeat(alice)
    sink.records.recorder = recorder = GatedRecorder(settings)
    answers: list[int] = []
    threads = [pinging(app, ping_path(m), answers)]
    assert recorder.entered.wait(30)
    threads.append(pinging(app, ping_path(m, "log"), answers))
    queued(sink, 1)  # one ping being committed, the other queued behind it
    closing = threading.Thread(target=sink.close)
    closing.start()
    with sink._ready:
        assert sink._ready.wait_for(lambda: sink._closing, 30)
    recorder.release.set()
    for t in [*threads, closing]:
        t.join(30)
    assert answers == [200, 200]
    assert recorder.batches == [1, 1]
    assert CheckRun.select().count() == 2
    assert_error(app.test_client().get(ping_path(m)), 503, "SERVICE_UNAVAILABLE")


def _ping_a_job(anon: Any, m: dict[str, Any], clock: Any) -> None:
    """start, 90 s, exit 3 with a message, 30 min, success: every ping answered 200."""
    assert anon.get(ping_path(m, "start")).status_code == 200
    clock.advance(seconds=90)
    failed = anon.post(ping_path(m, "3"), data=b"disk full", headers={"User-Agent": "backup/1"})
    assert failed.status_code == 200
    clock.advance(minutes=30)
    assert anon.get(ping_path(m)).status_code == 200


def _seen(user: Any, m: dict[str, Any]) -> tuple[Any, ...]:
    monitor = shown(user, m["id"])
    runs = [
        {k: v for k, v in run.items() if k not in ("id", "monitor_id")}
        for run in history(user, m["id"])
    ]
    notes = user.get("/api/v1/notifications").get_json()["data"]
    kept = ("status", "last_error", "last_check", "response_time", "next_deadline", "last_ping")
    return (
        {k: monitor[k] for k in kept},
        runs,
        [
            (n["type"], n["status"], n["message"].replace(m["name"], "NAME"))
            for n in notes
            if n["monitor_id"] == m["id"]
        ],
    )


def test_pings_recorded_through_the_database_worker_are_recorded_as_in_process(
    app: Any, settings: Any, clock: Any, alice: Any, anon: Any
) -> None:
    """The pipe to the database worker's child (pings as tuples) loses nothing."""
    services = app_state(app).services
    seen = []
    start = clock.now()
    for in_process in (True, False):
        clock.set(start)
        records = InProcess(settings) if in_process else DatabaseWorker(settings, claims=False)
        made = PingSink(records, clock)
        made.start()
        services["ping_sink"] = made
        try:
            m = make_heartbeat(alice, name=f"backup-{in_process}")
            _ping_a_job(anon, m, clock)
        finally:
            made.close()
        seen.append(_seen(alice, m))
    assert seen[0] == seen[1]
    monitor, runs, notes = seen[1]
    assert (monitor["status"], monitor["last_ping"]["kind"]) == ("online", "success")
    assert [(r["kind"], r["exit_code"], r["status"], r["response_time"]) for r in runs] == [
        ("success", None, "online", None),
        ("exit", 3, "offline", 90_000),
        ("start", None, "pending", None),
    ]
    assert (runs[1]["message"], runs[1]["user_agent"]) == ("disk full", "backup/1")
    assert notes == [
        ("recovery", "resolved", "NAME is UP again after 30m"),
        ("downtime", "resolved", "NAME is DOWN: exit code 3: disk full"),
    ]
