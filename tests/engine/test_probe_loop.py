"""The probe loop against a real local HTTP target: the bound, the hand-over, cancelling."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import pytest
import uvloop

from tests.engine.targets import CountingServer
from uptime_server.checks.types import CheckSpec
from uptime_server.engine import probe_loop
from uptime_server.engine.probe import ProbeConfig
from uptime_server.engine.probe_loop import (
    ProbeJob,
    ProbeLoop,
    close_shared_probe_loops,
    shared_probe_loop,
)


class Ended:
    """Collects what the loop hands back, and in how many calls."""

    def __init__(self) -> None:
        self.calls: list[list[ProbeJob]] = []
        self.lock = threading.Lock()

    def __call__(self, jobs: list[ProbeJob]) -> None:
        with self.lock:
            self.calls.append(list(jobs))

    @property
    def jobs(self) -> list[ProbeJob]:
        return [job for call in self.calls for job in call]


def make_loop(concurrency: int) -> ProbeLoop:
    return ProbeLoop(ProbeConfig(), concurrency=concurrency, name="test-probes")


def test_no_more_than_concurrency_checks_run_at_once(target):
    # Held checks stay in flight until released; none is parked meanwhile.
    loop = ProbeLoop(ProbeConfig(), concurrency=3, name="test-probes", park_after=60)
    ended = Ended()
    jobs = [ProbeJob(CheckSpec(url=target.url("held", f"k{i}"))) for i in range(6)]
    loop.submit(jobs, ended)
    deadline = time.monotonic() + 10
    while sum(target.hits.values()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # room for a fourth to start, were the bound not kept
    assert (sum(target.hits.values()), target.held) == (3, 3)
    for i in range(6):
        target.released[f"k{i}"].set()
    assert loop.wait_idle(20)
    loop.close()
    assert target.most_held == 3
    assert sorted(id(j) for j in ended.jobs) == sorted(id(j) for j in jobs)
    assert all(j.result is not None and j.result.status_code == 200 for j in jobs)


def test_ended_jobs_come_back_once_each_in_lists(target):
    loop, ended = make_loop(50), Ended()
    jobs = [ProbeJob(CheckSpec(url=target.url("ok", f"k{i}")), key=i) for i in range(40)]
    loop.submit(jobs, ended)
    assert loop.wait_idle(20)
    loop.close()
    assert sorted(j.key for j in ended.jobs) == list(range(40))
    assert len(ended.calls) <= len(jobs)
    assert loop.pending == 0
    assert all(j.started_at is not None and j.result.passed for j in jobs)


def test_cancel_drops_waiting_jobs_and_lets_the_running_one_finish(target):
    loop, ended = make_loop(1), Ended()
    jobs = [ProbeJob(CheckSpec(url=target.url("slow", f"k{i}") + "?s=0.5")) for i in range(3)]
    loop.submit(jobs, ended)
    assert target.arrived["k0"].wait(10)
    loop.cancel()
    assert loop.wait_idle(20)
    loop.close()
    first, *waiting = jobs
    assert (first.cancelled, first.result.status_code) == (False, 200)
    assert all(j.cancelled and j.started_at is None and j.result is None for j in waiting)
    assert target.hits["k1"] == target.hits["k2"] == 0
    assert len(ended.jobs) == 3


def test_close_cancels_running_checks(target):
    loop, ended = make_loop(2), Ended()
    jobs = [ProbeJob(CheckSpec(url=target.url("slow", f"k{i}") + "?s=5")) for i in range(2)]
    loop.submit(jobs, ended)
    assert target.arrived["k0"].wait(10) and target.arrived["k1"].wait(10)
    loop.close(timeout=5)
    assert all(j.cancelled and j.started_at is not None for j in jobs)
    assert len(ended.jobs) == 2


def test_a_deadline_cuts_a_run_short_retries_and_all(target):
    loop = make_loop(2)
    # Three attempts of up to 30 s each, 1 s apart: a budget of about 92 s.
    spec = CheckSpec(url=target.url("slow", "cut") + "?s=30", retry_count=2, check_interval=1)
    job = loop.run_sync(spec, deadline=0.5)
    assert (job.timed_out, job.result, job.error, job.cancelled) == (True, None, None, False)
    assert target.hits["cut"] == 1
    assert loop.pending == 0  # its slot is free again
    fast = loop.run_sync(CheckSpec(url=target.url("ok", "after")), deadline=10)
    loop.close()
    assert (fast.timed_out, fast.result.passed) == (False, True)


def _used(loop: ProbeLoop, target: CountingServer, key: str) -> ProbeLoop:
    """*loop* after one real check, so its thread and HTTP session exist."""
    job = loop.run_sync(CheckSpec(url=target.url("ok", key)), timeout=10)
    assert job.result is not None and job.result.passed
    assert loop.prober._sessions
    return loop


def test_shared_loops_close_with_their_sessions_and_start_afresh(target):
    config = ProbeConfig(user_agent="shared-close")
    first = _used(shared_probe_loop(config, 2), target, "a")
    assert shared_probe_loop(config, 2) is first
    close_shared_probe_loops()
    assert not first.prober._sessions and first._thread is not None
    assert not first._thread.is_alive()
    again = _used(shared_probe_loop(config, 2), target, "b")
    assert again is not first
    close_shared_probe_loops()
    assert not again.prober._sessions


def test_the_least_recently_used_shared_loop_beyond_the_limit_is_closed(target):
    limit = probe_loop._SHARED_LIMIT
    configs = [ProbeConfig(user_agent=f"lru-{i}") for i in range(limit + 1)]
    loops = [_used(shared_probe_loop(c, 1), target, f"k{i}") for i, c in enumerate(configs)]
    try:
        # The first was evicted when the last came in: closed, not leaked.
        assert not loops[0].prober._sessions
        assert all(loop.prober._sessions for loop in loops[1:])
        assert shared_probe_loop(configs[0], 1) is not loops[0]
    finally:
        close_shared_probe_loops()
    assert all(not loop.prober._sessions for loop in loops)


_EXIT_WITHOUT_CLOSING = """
import sys
from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import ProbeConfig
from uptime_server.engine.probe_loop import shared_probe_loop

job = shared_probe_loop(ProbeConfig(), 1).run_sync(CheckSpec(url=sys.argv[1]), timeout=10)
assert job.result is not None and job.result.passed, job
print("checked")
"""


def test_a_process_that_never_closes_the_shared_loop_exits_without_aiohttp_warnings(target):
    proc = subprocess.run(
        [sys.executable, "-X", "dev", "-c", _EXIT_WITHOUT_CLOSING, target.url("ok", "exit")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "checked"
    assert "Unclosed" not in proc.stderr and "ResourceWarning" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_daemon_closes_the_shared_loop_on_shutdown(target, settings, db):
    from uptime_server.daemon.process import Daemon, DaemonOptions

    loop = _used(shared_probe_loop(ProbeConfig(user_agent="daemon"), 1), target, "d")
    Daemon(settings, DaemonOptions(api=False, scheduler=False))._shutdown()
    assert not loop.prober._sessions
    assert loop._thread is not None and not loop._thread.is_alive()


@pytest.mark.parametrize("kind", ["uvloop", "asyncio"])
def test_checks_run_on_the_configured_event_loop_inside_the_test_net(target, connections, kind):
    loop = ProbeLoop(ProbeConfig(event_loop=kind), concurrency=4, name="test-probes")
    ended = Ended()
    port = target.server_address[1]
    jobs = [
        ProbeJob(CheckSpec(url=target.url("ok", f"loop-{kind}"))),
        ProbeJob(CheckSpec(url=f"tcp://127.0.0.1:{port}", type="tcp")),
    ]
    loop.submit(jobs, ended)
    assert loop.wait_idle(20)
    running = loop._loop
    loop.close()
    if kind == "uvloop":
        assert isinstance(running, uvloop.Loop)
    else:
        assert isinstance(running, asyncio.BaseEventLoop) and not isinstance(running, uvloop.Loop)
    assert [j.result.status_code if j.result else None for j in jobs] == [200, None]
    assert all(j.result is not None and j.result.passed for j in jobs), [j.result for j in jobs]
    # Both connections went through the net (tests/engine/conftest.py): on
    # uvloop the HTTP one by sock_connect, the tcp one by create_connection.
    assert connections.count(("127.0.0.1", port)) == 2


def test_asyncio_loop_where_uvloop_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    made = probe_loop.new_event_loop("uvloop")
    try:
        assert isinstance(made, asyncio.BaseEventLoop)
    finally:
        made.close()


def _held(target, key: str) -> ProbeJob:
    return ProbeJob(CheckSpec(url=target.url("held", key), timeout=20), key=key)


def test_checks_waiting_on_their_target_are_parked_and_the_queue_moves_on(target):
    """Two checks hold both slots; past ``park_after`` they stop counting and others run."""
    loop, ended = ProbeLoop(ProbeConfig(), concurrency=2, park_after=0.05), Ended()
    held = [_held(target, f"h{i}") for i in range(2)]
    loop.submit(held, ended)
    assert target.arrived["h0"].wait(10) and target.arrived["h1"].wait(10)
    quick_done = threading.Event()
    quick = [ProbeJob(CheckSpec(url=target.url("ok", f"q{i}")), key=f"q{i}") for i in range(3)]
    loop.submit(quick, lambda jobs: ended(jobs) or (len(ended.jobs) == 3 and quick_done.set()))
    try:
        # Without parking these wait for the held ones (released below, or 20 s).
        assert quick_done.wait(10), "the queued checks waited for the hanging ones"
        assert all(j.result is not None and j.result.passed for j in quick)
        assert not any(j.result for j in held)
        assert loop.parked == 2
        assert loop.pending == 2 and loop.busy == 0
    finally:
        target.released["h0"].set()
        target.released["h1"].set()
    assert loop.wait_idle(20)
    loop.close()
    assert all(j.result is not None and j.result.passed for j in held)
    assert loop.parked == 0 and loop.busy == 0


def test_parked_checks_are_bounded_per_slot(target):
    """Concurrency 1 parks at most 2 (PARKED_PER_SLOT): a fourth hanging check waits."""
    assert probe_loop.PARKED_PER_SLOT == 2
    loop, ended = ProbeLoop(ProbeConfig(), concurrency=1, park_after=0.05), Ended()
    jobs = [_held(target, f"b{i}") for i in range(5)]
    loop.submit(jobs, ended)
    try:
        for key in ("b0", "b1", "b2"):
            assert target.arrived[key].wait(10), key
        # Two parked and one running: nothing more starts however long they hang
        # (the sweep runs every park_after / 4, so 0.3 s is ~24 sweeps).
        assert not target.arrived["b3"].wait(0.3)
        assert loop.parked == 2
        target.released["b0"].set()  # a parked one ends: the running one parks, b3 starts
        assert target.arrived["b3"].wait(10)
        assert not target.arrived["b4"].is_set()
    finally:
        for i in range(5):
            target.released[f"b{i}"].set()
    assert loop.wait_idle(20)
    loop.close()
    assert sorted(j.key for j in ended.jobs) == [f"b{i}" for i in range(5)]
    assert all(j.result is not None and j.result.passed for j in jobs)
