"""Probe agents against a real daemon on loopback (docs/agents.md).

The daemon is a real ``uptime server run`` process with three locations; it
runs the ``local`` checks itself and leaves ``eu-west`` and ``us-east`` to
agents. An agent is the real ``Agent`` driven turn by turn (``loop(now)``)
on a manual clock, with the real probe loop, HTTP client and disk buffer:
the clock decides when its leases lapse, the daemon is stopped and started
for real. Where the database matters (claims, results, duplicate batches,
leases, the quorum), a test runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import UPTIME, Cluster, DaemonProcess, free_port, wait_for
from uptime_server.clock import ManualClock
from uptime_server.db import connect_url
from uptime_server.engine.probe import ProbeConfig
from uptime_server.engine.probe_loop import ProbeLoop
from uptime_server.models import MonitorLocation
from uptime_server.net.guard import TARGET_NOT_ALLOWED
from uptime_server.probe_agent.buffer import DiskBuffer
from uptime_server.probe_agent.canary import Canary
from uptime_server.probe_agent.client import AgentClient
from uptime_server.probe_agent.runner import Agent

pytestmark = pytest.mark.slow

LEASE = 60  # seconds: room for a daemon restart on a loaded machine


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """SQLite unless a test asks for both (``on_both_databases``)."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return f"sqlite:///{tmp_path / 'uptime.db'}"
    return request.getfixturevalue("fresh_pg_url")


on_both_databases = pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def server(database_url: str, make_cluster: Any) -> Iterator[tuple[Cluster, DaemonProcess]]:
    # The database first, so that it is dropped after the daemon has stopped.
    cluster = make_cluster(database_url)
    cluster.env.update(
        UPTIME_LOCATIONS="local,eu-west,us-east",
        UPTIME_LEASE_SECONDS=str(LEASE),
        UPTIME_ADMINS="owner@example.com",
        # The tests turn agents as fast as they can (tests/agents covers the limit).
        UPTIME_AGENT_RATE_LIMIT="off",
    )
    daemon = cluster.daemon().start()
    cluster.sign_in()
    yield cluster, daemon


def server_cli(cluster: Cluster, *args: str) -> str:
    """What ``uptime server ARGS...`` prints on the daemon's machine (it must exit 0)."""
    out = subprocess.run(
        [*UPTIME, "server", *args],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def agent_token(cluster: Cluster, location: str = "eu-west", name: str = "paris") -> str:
    token = server_cli(cluster, "agent-token", "--location", location, "--name", name).strip()
    assert token.startswith("upa_")
    return token


@pytest.fixture
def make_agent(server: Any, tmp_path: Path) -> Iterator[Any]:
    made: list[Agent] = []
    cluster, daemon = server

    def make(
        *,
        buffer_dir: Path | None = None,
        canary: tuple[str, ...] = (),
        token: str | None = None,
        location: str = "eu-west",
        name: str = "paris",
        probe_config: ProbeConfig | None = None,
        **kw: Any,
    ) -> Agent:
        probes = ProbeLoop(probe_config or ProbeConfig(), concurrency=10, name="test-agent")
        token = token or agent_token(cluster, location, name)
        agent = Agent(
            AgentClient(daemon.base, token, timeout=2),
            probes,
            DiskBuffer(buffer_dir or tmp_path / f"buffer-{len(made)}"),
            clock=ManualClock(datetime.now(UTC)),
            canary=Canary(canary, interval=1),
            **kw,
        )
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.probes.close()
        agent.client.close()


def eu_monitor(
    cluster: Cluster, daemon: DaemonProcess, name: str, url: str, interval: int = 30
) -> int:
    return cluster.add_monitor(
        daemon, name, url, locations=["eu-west"], check_interval=interval, timeout=5
    )


def claim_and_run(agent: Agent, expected: int) -> None:
    """Turns until *expected* checks are claimed, then wait for them to end."""
    wait_for(
        lambda: agent.loop(agent.clock.now()) is not None and len(agent.leases) >= expected,
        60,
        f"{expected} claims",
    )
    assert agent.probes.wait_idle(60)


def runs(cluster: Cluster, monitor_id: int) -> list[tuple[int, str, bool]]:
    """(run id, status, counted) of the monitor's runs, oldest first, read from the database."""
    db = connect_url(cluster.env["UPTIME_DATABASE_URL"])
    with db.connection_context():
        rows = db.execute_sql(
            f"SELECT id, status, counted FROM check_runs WHERE monitor_id = {db.param} ORDER BY id",
            (monitor_id,),
        ).fetchall()
    db.close()
    return [(i, s, bool(c)) for i, s, c in rows]


def monitor(cluster: Cluster, daemon: DaemonProcess, monitor_id: int) -> dict[str, Any]:
    return cluster.api(daemon, "GET", f"/monitors/{monitor_id}").json()["data"]


@on_both_databases
def test_claims_results_state_and_email(server, make_agent, target, mailbox):
    cluster, daemon = server
    monitor_id = eu_monitor(cluster, daemon, "far", target.url)  # the target answers 503
    agent = make_agent()

    claim_and_run(agent, 1)
    agent.loop(agent.clock.now())

    assert runs(cluster, monitor_id)[0][1:] == ("offline", True)
    assert monitor(cluster, daemon, monitor_id)["status"] == "offline"
    assert agent.counts.recorded == 1 and len(agent.buffer) == 0
    subjects = wait_for(lambda: mailbox[0].subjects(), 60, "the DOWN email")
    assert len(subjects) == 1 and "far" in subjects[0]


def test_the_server_unreachable_buffers_on_disk_and_flushes_in_order(
    server, make_agent, target, tmp_path
):
    cluster, daemon = server
    ids = [eu_monitor(cluster, daemon, f"m{i}", target.url) for i in range(3)]
    agent = make_agent(buffer_dir=tmp_path / "buf", batch_size=1)
    claim_and_run(agent, 3)

    daemon.stop()
    agent.loop(agent.clock.now())  # the results go to disk; posting fails

    assert not agent.online
    files = sorted((tmp_path / "buf").glob("*.json"))
    assert len(files) == 3 and len(agent.buffer) == 3
    order = [b.results[0]["monitor_id"] for b in agent.buffer.batches]
    assert sorted(order) == sorted(ids)
    assert agent.loop(agent.clock.now()) > 0  # still down: waits, keeps everything
    assert len(agent.buffer) == 3

    daemon.start()
    agent.clock.advance(30)  # past the retry delay, within the 60 s lease
    agent.loop(agent.clock.now())

    assert agent.online and len(agent.buffer) == 0
    assert list((tmp_path / "buf").glob("*.json")) == []
    run_ids = [runs(cluster, m)[0][0] for m in order]
    assert run_ids == sorted(run_ids)  # recorded in the order they were buffered
    assert agent.counts.recorded == 3 and agent.counts.expired == 0


@on_both_databases
def test_results_whose_lease_expired_offline_are_dropped_and_counted(server, make_agent, target):
    cluster, daemon = server
    ids = [eu_monitor(cluster, daemon, f"m{i}", target.url) for i in range(2)]
    agent = make_agent()
    claim_and_run(agent, 2)
    daemon.stop()
    agent.loop(agent.clock.now())
    assert len(agent.buffer) == 2

    agent.clock.advance(LEASE + 1)
    daemon.start()
    agent.loop(agent.clock.now())

    assert agent.online and len(agent.buffer) == 0
    assert agent.counts.expired == 2 and agent.counts.posted == 0
    assert agent.status()["dropped_results"] == 2
    assert all(runs(cluster, m) == [] for m in ids)
    listed = cluster.api(daemon, "GET", "/agents").json()["data"]
    assert [a["dropped_results"] for a in listed] == [2]


@on_both_databases
def test_a_batch_whose_answer_was_lost_is_posted_again_under_its_id_and_recorded_once(
    server, make_agent, target, tmp_path
):
    cluster, daemon = server
    monitor_id = eu_monitor(cluster, daemon, "once", target.url)
    agent = make_agent(buffer_dir=tmp_path / "buf")
    claim_and_run(agent, 1)
    agent._buffer_ended(agent.clock.now())
    [batch] = agent.buffer.batches
    posted = [{k: v for k, v in r.items() if k != "lease_expires_at"} for r in batch.results]
    first = agent.client.post_results(batch.batch_id, posted, agent.status())  # answer "lost"

    # The agent restarts from its buffer, which still holds the batch.
    token = agent.client.session.headers["Authorization"].removeprefix("Bearer ")
    again = make_agent(buffer_dir=tmp_path / "buf", token=token)
    again.loop(again.clock.now())

    assert first["duplicate"] is False and first["recorded"] == 1
    assert len(again.buffer) == 0 and again.counts.recorded == 1
    assert len(runs(cluster, monitor_id)) == 1
    repeat = agent.client.post_results(batch.batch_id, posted, agent.status())
    assert repeat == {**first, "duplicate": True}


def test_a_batch_the_server_took_whose_answer_was_lost_is_not_dropped_when_its_lease_ends(
    server, make_agent, target, tmp_path
):
    """The server recorded the batch, the answer never came, and the outage outlasted the
    leases: the batch goes again whole, the server answers with what it recorded, and
    the agent counts it recorded, not dropped."""
    cluster, daemon = server
    monitor_id = eu_monitor(cluster, daemon, "taken", target.url)
    agent = make_agent(buffer_dir=tmp_path / "buf")
    claim_and_run(agent, 1)
    real_post = agent.client.session.post
    delivered: list[int] = []

    def answer_lost(*args: Any, **kwargs: Any) -> Any:
        delivered.append(real_post(*args, **kwargs).status_code)  # the server has it...
        raise requests.ReadTimeout("the answer was lost")  # ...the agent never hears

    agent.client.session.post = answer_lost  # type: ignore[method-assign]
    agent.loop(agent.clock.now())
    assert delivered == [200] and not agent.online
    [batch] = agent.buffer.batches
    assert batch.sent and len(batch.results) == 1

    agent.client.session.post = real_post  # type: ignore[method-assign]
    agent.clock.advance(LEASE + 1)  # the outage outlasts the lease
    agent.loop(agent.clock.now())

    assert agent.online and len(agent.buffer) == 0
    assert agent.counts.recorded == 1 and agent.counts.expired == 0 and agent.dropped == 0
    assert agent.status()["dropped_results"] == 0
    assert len(runs(cluster, monitor_id)) == 1


def test_tokens_are_separated_both_ways(server, make_agent):
    cluster, daemon = server
    agent = make_agent()
    token = agent.client.session.headers["Authorization"]

    as_agent = requests.get(
        f"{daemon.base}/api/v1/monitors", headers={"Authorization": token}, timeout=10
    )
    as_user = cluster.api(daemon, "POST", "/agent/claims", json={})

    assert as_agent.status_code == 403 and as_agent.json()["error"]["code"] == "FORBIDDEN"
    assert as_user.status_code == 403 and as_user.json()["error"]["code"] == "FORBIDDEN"


def test_a_failing_canary_makes_the_agent_degraded_and_its_failures_uncounted(
    server, make_agent, target
):
    cluster, daemon = server
    monitor_id = eu_monitor(cluster, daemon, "far", target.url, interval=5)  # answers 503
    closed = f"127.0.0.1:{free_port()}"  # nothing listens: the uplink looks down
    agent = make_agent(canary=(closed,))

    claim_and_run(agent, 1)
    agent.loop(agent.clock.now())

    assert agent.degraded
    assert runs(cluster, monitor_id)[0][1:] == ("offline", False)
    assert monitor(cluster, daemon, monitor_id)["status"] == "pending"
    assert cluster.api(daemon, "GET", "/notifications").json()["data"] == []
    health = requests.get(f"{daemon.base}/healthz", timeout=10).json()
    assert health["agents"] == {"degraded": 1} and "paris" not in json.dumps(health)
    assert '"degraded": true' in server_cli(cluster, "agents", "--json")

    # The uplink is back: the next failure counts.
    agent.canary.targets = (target.url.split("/")[2],)
    agent.clock.advance(6)
    claim_and_run(agent, 1)  # due again 5 s later on the daemon's clock
    agent.loop(agent.clock.now())

    assert not agent.degraded
    assert [r[1:] for r in runs(cluster, monitor_id)] == [("offline", False), ("offline", True)]
    assert monitor(cluster, daemon, monitor_id)["status"] == "offline"


def test_uptime_agent_run_records_checks_honours_block_private_and_stops_on_sigterm(
    server, target, tmp_path
):
    """Two real agent processes: paris as configured by default, new-york with
    UPTIME_BLOCK_PRIVATE_TARGETS (the agent reads it as the server does), so
    its check of the loopback target is refused before any connection."""
    cluster, daemon = server
    target.status = 200
    paris_mid = eu_monitor(cluster, daemon, "cli", target.url)
    guarded_mid = cluster.add_monitor(
        daemon, "guarded", target.url, locations=["us-east"], check_interval=30, timeout=5
    )
    agents = []
    for name, location, extra in (
        ("paris", "eu-west", {}),
        ("new-york", "us-east", {"UPTIME_BLOCK_PRIVATE_TARGETS": "true"}),
    ):
        env = {
            **cluster.env,
            **extra,
            "UPTIME_AGENT_TOKEN": agent_token(cluster, location, name),
            "UPTIME_AGENT_BUFFER_DIR": str(tmp_path / f"buffer-{name}"),
        }
        log = (tmp_path / f"agent-{name}.log").open("wb")
        agents.append(
            subprocess.Popen(
                [*UPTIME, "agent", "run", "--server", daemon.base, "--grace", "5"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    try:
        wait_for(lambda: runs(cluster, paris_mid), 90, "paris's first run")
        wait_for(lambda: runs(cluster, guarded_mid), 90, "new-york's first run")
        assert monitor(cluster, daemon, paris_mid)["status"] == "online"
        assert monitor(cluster, daemon, guarded_mid)["status"] == "offline"
        [refused] = history(cluster, daemon, guarded_mid)
        assert refused["error"] == TARGET_NOT_ALLOWED
        listed = cluster.api(daemon, "GET", "/agents").json()["data"]
        assert all(a["version"] and a["last_seen_at"] for a in listed) and len(listed) == 2
    finally:
        for agent in agents:
            agent.terminate()
        codes = [agent.wait(60) for agent in agents]
    assert codes == [0, 0], [p.read_text() for p in sorted(tmp_path.glob("agent-*.log"))]


# -- two agents, two locations, a quorum of two --------------------------------------


def due_now(cluster: Cluster, monitor_id: int) -> None:
    """The monitor's checks due now in every location.

    The daemon's scheduler keeps the real clock: bringing the due time forward
    is how a test takes the next round without waiting an interval.
    """
    db = connect_url(cluster.env["UPTIME_DATABASE_URL"])
    with db.bind_ctx([MonitorLocation]), db.connection_context():
        due = datetime.now(UTC) - timedelta(seconds=1)
        MonitorLocation.update(next_check_at=due).where(
            MonitorLocation.monitor == monitor_id
        ).execute()
    db.close()


def take_round(cluster: Cluster, monitor_id: int, agents: Sequence[Agent]) -> None:
    """Each agent claims and runs the monitor's check, then posts it, in *agents*' order."""
    due_now(cluster, monitor_id)
    for agent in agents:
        claim_and_run(agent, 1)
    for agent in agents:
        agent.loop(agent.clock.now())
        assert agent.online and len(agent.buffer) == 0


def history(cluster: Cluster, daemon: DaemonProcess, monitor_id: int) -> list[dict[str, Any]]:
    r = cluster.api(daemon, "GET", f"/monitors/{monitor_id}/history", params={"limit": 1000})
    assert r.status_code == 200, r.text
    return r.json()["data"]


def downtimes(cluster: Cluster, daemon: DaemonProcess) -> list[dict[str, Any]]:
    r = cluster.api(daemon, "GET", "/notifications", params={"type": "downtime"})
    return r.json()["data"]


def location_states(cluster: Cluster, daemon: DaemonProcess, monitor_id: int) -> dict[str, str]:
    shown = monitor(cluster, daemon, monitor_id)["locations_status"]
    return {s["location"]: "stale" if s["stale"] else s["status"] for s in shown}


def degraded_in_health(daemon: DaemonProcess) -> int:
    """How many agents /healthz counts as degraded (it names none: it is public)."""
    health = requests.get(f"{daemon.base}/healthz", timeout=10).json()
    return health.get("agents", {}).get("degraded", 0)


def listed_degraded(cluster: Cluster, daemon: DaemonProcess) -> dict[str, tuple[str, bool]]:
    """Each agent's (location, degraded), by name, from the API and from the CLI (which agree)."""
    api = cluster.api(daemon, "GET", "/agents").json()["data"]
    cli = json.loads(server_cli(cluster, "agents", "--json"))["data"]
    by_api = {a["name"]: (a["location"], a["degraded"]) for a in api}
    assert {a["name"]: (a["location"], a["degraded"]) for a in cli} == by_api
    return by_api


@on_both_databases
def test_two_agents_in_two_locations_with_a_quorum_of_two(server, make_agent, target, mailbox):
    """eu-west follows the target; us-east refuses private targets, so it always fails.

    The daemon itself runs only ``local``: every run of the monitor is an agent's.
    """
    cluster, daemon = server
    box, _ = mailbox
    target.status = 200
    uplink = target.url.split("/")[2]  # host:port that answers: the canary passes
    eu = make_agent(location="eu-west", name="paris")
    us = make_agent(
        location="us-east",
        name="new-york",
        probe_config=ProbeConfig(block_private=True),
        canary=(uplink,),
    )
    mid = cluster.add_monitor(
        daemon, "api", target.url, check_interval=5, timeout=5, locations=["eu-west", "us-east"]
    )
    r = cluster.api(daemon, "PUT", f"/monitors/{mid}/alerts", json={"min_failed_locations": 2})
    assert r.status_code == 200, r.text
    assert r.json()["data"]["effective_min_failed_locations"] == 2

    # 1. One location failing: warning, and nothing sent however many rounds.
    take_round(cluster, mid, (eu, us))
    assert monitor(cluster, daemon, mid)["status"] == "warning"
    assert location_states(cluster, daemon, mid) == {"eu-west": "online", "us-east": "offline"}
    take_round(cluster, mid, (eu, us))
    assert monitor(cluster, daemon, mid)["status"] == "warning"
    assert cluster.api(daemon, "GET", "/notifications").json()["data"] == []
    assert box.subjects() == []

    # 2. Both failing: offline, one downtime and one DOWN email over three rounds.
    target.status = 503
    for _ in range(3):
        take_round(cluster, mid, (eu, us))
        assert monitor(cluster, daemon, mid)["status"] == "offline"
    wait_for(lambda: box.subjects(), 30, "the DOWN email")
    assert box.subjects() == ["[Uptime] DOWN: api"]
    assert len(downtimes(cluster, daemon)) == 1

    # 3. eu-west passes again: one location failing, the downtime resolves.
    target.status = 200
    take_round(cluster, mid, (eu, us))
    wait_for(lambda: len(box.subjects()) == 2, 30, "the UP email")
    assert box.subjects() == ["[Uptime] DOWN: api", "[Uptime] UP: api"]
    assert monitor(cluster, daemon, mid)["status"] == "warning"
    assert [d["status"] for d in downtimes(cluster, daemon)] == ["resolved"]

    # 4. us-east's own uplink fails: its agent is degraded and its failures are
    # kept as history but not counted. us-east then goes stale (1.5 intervals
    # after its last counted run) and is left out: the quorum reads eu-west
    # alone, which passes, so the monitor is online (it would be warning at
    # most had eu-west failed: one fresh location cannot reach a quorum of 2).
    us.canary.targets = (f"127.0.0.1:{free_port()}",)  # nothing listens there
    us.clock.advance(1)  # the canary's interval
    seen = len(history(cluster, daemon, mid))

    def online() -> bool:
        take_round(cluster, mid, (eu, us))
        return monitor(cluster, daemon, mid)["status"] == "online"

    wait_for(online, 30, "us-east stale and the monitor online on eu-west alone")
    assert us.degraded and not eu.degraded
    shown = monitor(cluster, daemon, mid)
    assert shown["stale_locations"] == ["us-east"]
    assert location_states(cluster, daemon, mid) == {"eu-west": "online", "us-east": "stale"}
    runs_now = history(cluster, daemon, mid)  # newest first
    since = runs_now[: len(runs_now) - seen]
    assert {(h["location"], h["status"], h.get("counted", True)) for h in since} == {
        ("eu-west", "online", True),
        ("us-east", "offline", False),
    }
    assert len(downtimes(cluster, daemon)) == 1 and len(box.subjects()) == 2
    # /healthz serves a healthy answer again for a second: it shows up within that.
    wait_for(lambda: degraded_in_health(daemon) == 1, 5, "/healthz: one degraded agent")
    assert listed_degraded(cluster, daemon) == {
        "paris": ("eu-west", False),
        "new-york": ("us-east", True),
    }

    # Both agents fail now, but us-east's failures still do not count: eu-west
    # failing alone is one location of the two needed, a warning, nothing sent.
    target.status = 503
    take_round(cluster, mid, (eu, us))
    assert monitor(cluster, daemon, mid)["status"] == "warning"
    assert location_states(cluster, daemon, mid) == {"eu-west": "offline", "us-east": "stale"}
    assert len(downtimes(cluster, daemon)) == 1
    target.status = 200

    # The uplink is back: us-east's failures count again. It reports first,
    # so the round closes at eu-west with both fresh: one failing, warning.
    us.canary.targets = (uplink,)
    us.clock.advance(1)
    take_round(cluster, mid, (us, eu))
    assert not us.degraded
    assert monitor(cluster, daemon, mid)["status"] == "warning"
    assert location_states(cluster, daemon, mid) == {"eu-west": "online", "us-east": "offline"}
    wait_for(lambda: degraded_in_health(daemon) == 0, 5, "/healthz: no degraded agent")
    assert listed_degraded(cluster, daemon)["new-york"] == ("us-east", False)
    assert len(downtimes(cluster, daemon)) == 1 and len(box.subjects()) == 2

    # The listing shows what each agent last said of itself.
    listed = {a["name"]: a for a in cluster.api(daemon, "GET", "/agents").json()["data"]}
    for name, agent in (("paris", eu), ("new-york", us)):
        said = agent.status()
        shown = listed[name]
        assert shown["last_seen_at"] and shown["version"] == said["version"]
        assert shown["checks_per_second"] == said["checks_per_second"] > 0
        assert shown["lag_seconds"] == said["lag_seconds"]
