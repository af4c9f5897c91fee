"""The probe loop against a real local HTTP target: the bound, the hand-over, cancelling."""

from __future__ import annotations

import threading
import time

import pytest

from tests.engine.targets import CountingServer
from uptime_server.engine.probe import CheckSpec, ProbeConfig
from uptime_server.engine.probe_loop import ProbeJob, ProbeLoop


@pytest.fixture
def target():
    server = CountingServer()
    yield server
    server.stop()


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
    loop, ended = make_loop(3), Ended()
    jobs = [ProbeJob(CheckSpec(url=target.url("slow", f"k{i}") + "?s=0.4")) for i in range(6)]
    started = time.monotonic()
    loop.submit(jobs, ended)
    assert loop.wait_idle(20)
    elapsed = time.monotonic() - started
    loop.close()
    # Six 0.4 s checks three at a time take two rounds; all at once, one.
    assert elapsed >= 0.75
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
