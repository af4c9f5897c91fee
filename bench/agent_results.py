"""Probe agents: claims and result batches through the agent API of a real daemon.

Builds a SQLite database with N monitors (2,000) in location ``eu-west``,
all due, and an agent token; starts ``uptime server run`` (the scheduler runs
``local``, so only the agent takes these); then, as an agent would, claims
them in batches of 500 (``POST /api/v1/agent/claims``) and posts a result
for each in batches of 200 (``POST /api/v1/agent/results``), each recorded
through the recorder. Prints, for claims and results separately, checks/s
(wall clock, loaded-machine sensitive) and the daemon's CPU milliseconds per
check (utime+stime from /proc, robust to load), and the same for a batch
posted a second time (the idempotent answer).

Run: ``python -m bench.agent_results [--monitors N]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from bench.engine_run import cpu_s
from bench.target import daemon_env, free_port, stop_process


def build(data_dir: Path, monitors: int) -> tuple[dict[str, str], str]:
    from uptime_server import db, migrations
    from uptime_server.auth import agent_tokens
    from uptime_server.auth.local_users import mint_local_session
    from uptime_server.config import load_settings
    from uptime_server.models import User
    from uptime_server.schemas.monitor_config import MonitorConfig
    from uptime_server.services import monitors as monitor_service

    port = free_port()
    env = daemon_env(
        data_dir,
        port,
        UPTIME_DATABASE_URL=f"sqlite:///{data_dir / 'uptime.db'}",
        UPTIME_SECRET_KEY="bench",
        UPTIME_RATE_LIMIT="off",
        UPTIME_AGENT_RATE_LIMIT="off",  # a benchmark measures the work, not the limit
        UPTIME_LOCATIONS="local,eu-west",
        UPTIME_MAX_MONITORS_PER_USER="100000",
        UPTIME_LEASE_SECONDS="600",
    )
    settings = load_settings(env)
    migrations.migrate(db.bind(settings.database_url))
    # Created two minutes ago: every first run (spread over up to a minute) is due.
    now = datetime.now(UTC) - timedelta(minutes=2)
    mint_local_session(settings, email="bench@example.com")
    with db.database.connection_context():
        user = User.get(User.email == "bench@example.com")
        for i in range(monitors):
            cfg = MonitorConfig.model_validate(
                {
                    "name": f"m{i}",
                    "url": f"http://127.0.0.1:9/{i}",
                    "type": "http",
                    "locations": ["eu-west"],
                    "check_interval": 3600,
                },
                context={"settings": settings},
            )
            monitor_service.create_monitor(user, cfg, now=now, settings=settings)
        secret, _ = agent_tokens.create_agent(settings, location="eu-west", name="bench", now=now)
    db.database.close()
    return env, secret


def start_daemon(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``uptime server run``; waits up to two minutes (start-up is slow on a loaded machine)."""
    uptime = Path(sys.executable).with_name("uptime")
    with open(Path(env["UPTIME_DATA_DIR"]) / "daemon.log", "ab") as log:
        process = subprocess.Popen([str(uptime), "server", "run"], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            health = f"http://127.0.0.1:{env['UPTIME_PORT']}/healthz"
            if requests.get(health, timeout=1).status_code == 200:
                return process
        except requests.RequestException:
            time.sleep(0.2)
    stop_process(process)
    raise RuntimeError("the daemon did not start")


def line(what: str, count: int, wall: float, cpu: float, note: str = "") -> None:
    print(f"  {what:8} {count / wall:8.0f} checks/s   {1000 * cpu / count:.3f} ms CPU/check{note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env, token = build(Path(tmp), args.monitors)
        daemon = start_daemon(env)
        base = f"http://127.0.0.1:{env['UPTIME_PORT']}/api/v1/agent"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        stat = f"/proc/{daemon.pid}/stat"
        try:
            claim_s = claim_cpu = post_s = post_cpu = dup_s = dup_cpu = 0.0
            claimed = recorded = dups = 0
            while True:
                t0, c0 = time.perf_counter(), cpu_s(stat)
                claims = session.post(f"{base}/claims", json={"limit": 500}, timeout=60).json()
                claim_s += time.perf_counter() - t0
                claim_cpu += cpu_s(stat) - c0
                if not claims["data"]:
                    break
                claimed += len(claims["data"])
                for start in range(0, len(claims["data"]), 200):
                    chunk = claims["data"][start : start + 200]
                    body = {
                        "batch_id": uuid.uuid4().hex,
                        "results": [
                            {
                                "monitor_id": c["monitor_id"],
                                "lease_owner": c["lease_owner"],
                                "checked_at": datetime.now(UTC).isoformat(),
                                "passed": True,
                                "response_time": 12,
                                "status_code": 200,
                            }
                            for c in chunk
                        ],
                    }
                    t0, c0 = time.perf_counter(), cpu_s(stat)
                    answer = session.post(f"{base}/results", json=body, timeout=60).json()
                    post_s += time.perf_counter() - t0
                    post_cpu += cpu_s(stat) - c0
                    recorded += answer["recorded"]
                    t0, c0 = time.perf_counter(), cpu_s(stat)
                    again = session.post(f"{base}/results", json=body, timeout=60).json()
                    dup_s += time.perf_counter() - t0
                    dup_cpu += cpu_s(stat) - c0
                    assert again["duplicate"] and again["recorded"] == answer["recorded"]
                    dups += len(chunk)
        finally:
            stop_process(daemon)
        load = os.getloadavg()[0]
        print(f"agent API, {args.monitors} monitors, SQLite, load average {load:.1f}")
        line("claims", claimed, claim_s, claim_cpu)
        line("results", recorded, post_s, post_cpu)
        line("repeats", dups, dup_s, dup_cpu, "  (answered again, nothing recorded)")
        assert recorded == claimed == args.monitors, (recorded, claimed)


if __name__ == "__main__":
    main()
