"""The agent's loop(now) against the app served on loopback, one clock for both.

The server (waitress in a thread, ``tests.live_server``) and the agent share a
``ManualClock``, so leases lapse when the test says, on both sides; the
checks run for real against a target on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import recv_until
from tests.live_server import serving
from uptime_server import db
from uptime_server.engine.probe import ProbeConfig
from uptime_server.engine.probe_loop import ProbeLoop
from uptime_server.models import CheckRun, Monitor, MonitorLocation
from uptime_server.net.guard import TARGET_NOT_ALLOWED
from uptime_server.probe_agent.buffer import DiskBuffer
from uptime_server.probe_agent.client import AgentClient
from uptime_server.probe_agent.runner import Agent
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors


@pytest.fixture
def base_url(app: Any) -> Iterator[str]:
    with serving(app, threads=4) as url:
        yield url


@pytest.fixture
def run_agent(make_agent: Any, base_url: str, clock: Any, tmp_path: Any) -> Iterator[Any]:
    made: list[Agent] = []

    def make() -> Agent:
        caller = make_agent()
        agent = Agent(
            AgentClient(base_url, caller.token, timeout=10),
            ProbeLoop(ProbeConfig(), concurrency=4, clock=clock, name="agent-under-test"),
            DiskBuffer(tmp_path / f"buffer-{len(made)}"),
            clock=clock,
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.probes.close()
        agent.client.close()


def _slot(monitor_id: int) -> MonitorLocation:
    with db.database.connection_context():
        return MonitorLocation.get(
            (MonitorLocation.monitor == monitor_id) & (MonitorLocation.location == "eu-west")
        )


def test_one_cycle_claims_runs_and_records(run_agent, make_monitor, clock, target):
    monitor = make_monitor(locations=["eu-west"], url=target.url("ok", "a"), check_interval=60)
    clock.advance(61)
    agent = run_agent()

    agent.loop(clock.now())  # claims and submits
    assert agent.probes.wait_idle(30)
    agent.loop(clock.now())  # buffers and posts

    assert target.hits["a"] == 1
    with db.database.connection_context():
        assert Monitor.get_by_id(monitor.id).status == "online"
    assert agent.counts.recorded == 1 and agent.leases == {}
    status = agent.status(clock.now())
    assert status["checks_per_second"] > 0 and status["degraded"] is False


def test_a_slow_check_keeps_its_lease_while_the_agent_renews_it(
    run_agent, make_monitor, clock, target
):
    monitor = make_monitor(
        locations=["eu-west"], url=target.url("held", "slow"), check_interval=60, timeout=60
    )
    clock.advance(61)
    agent, other = run_agent(), run_agent()
    agent.loop(clock.now())
    assert target.arrived["slow"].wait(30)

    for _ in range(6):  # a minute: four leases of 15 s
        clock.advance(10)
        agent.loop(clock.now())
        assert _slot(monitor.id).lease_expires_at > clock.now()
        other.loop(clock.now())
        assert other.leases == {}  # never handed the check

    target.released["slow"].set()
    assert agent.probes.wait_idle(30)
    agent.loop(clock.now())
    assert agent.counts.recorded == 1 and target.hits["slow"] == 1


def test_a_lease_lost_while_the_agent_was_away_drops_its_result(
    run_agent, make_monitor, clock, target
):
    monitor = make_monitor(locations=["eu-west"], url=target.url("held", "late"), check_interval=60)
    clock.advance(61)
    agent, other = run_agent(), run_agent()
    agent.loop(clock.now())
    assert target.arrived["late"].wait(30)

    clock.advance(16)  # the agent did not renew: its lease lapsed
    other.loop(clock.now())
    assert len(other.leases) == 1  # taken over
    target.released["late"].set()
    assert agent.probes.wait_idle(30) and other.probes.wait_idle(30)
    agent.loop(clock.now())  # its lease lapsed on its own clock: the result is dropped
    other.loop(clock.now())

    assert agent.counts.expired == 1 and agent.dropped == 1 and agent.counts.posted == 0
    assert other.counts.recorded == 1
    with db.database.connection_context():
        assert CheckRun.select().where(CheckRun.monitor == monitor.id).count() == 1


@pytest.mark.parametrize(
    ("extra_env", "blocked"),
    [({"UPTIME_BLOCK_PRIVATE_TARGETS": "true"}, True), ({}, False)],
)
def test_the_agent_refuses_private_targets_when_its_server_does(
    run_agent, alice, settings, clock, tcp_server, blocked
):
    """The agent's own setting is off: the server's policy, said in each claim,
    decides, with the server's guard and error text, before any connection."""
    dialled: list[bytes] = []

    def answer(sock: Any) -> None:
        dialled.append(recv_until(sock, b"\r\n\r\n"))
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    port = tcp_server(answer)
    # Made before the policy was turned on (a 127.0.0.1 literal is refused at
    # create with it on).
    before = settings.with_overrides(block_private_targets=False)
    body = {"name": "inside", "type": "http", "url": f"http://127.0.0.1:{port}/"}
    body["locations"] = ["eu-west"]
    config = MonitorConfig.model_validate(body, context={"settings": before})
    with db.database.connection_context():
        monitor = monitors.create_monitor(alice.acting, config, now=clock.now(), settings=before)
    clock.advance(61)
    agent = run_agent()  # ProbeConfig(): its own UPTIME_BLOCK_PRIVATE_TARGETS is off

    agent.loop(clock.now())
    assert agent.probes.wait_idle(30)
    agent.loop(clock.now())

    assert agent.counts.recorded == 1
    with db.database.connection_context():
        [run] = CheckRun.select().where(CheckRun.monitor == monitor.id)
    if blocked:
        assert (run.status, run.error) == ("offline", TARGET_NOT_ALLOWED)
        assert dialled == []
    else:
        assert (run.status, run.error) == ("online", None)
        assert len(dialled) == 1
