"""What the location quorum costs: the recorder per run, and ``GET /monitors/{id}``.

In-process on an embedded SQLite database (no daemon, no network), so the
figures are CPU seconds of this one process (``time.process_time``) beside
the wall time; CPU is what stays put on a shared, loaded machine.

- **Recorder**: N monitors (500) with one location, then N with three;
  ``Recorder.record`` takes one batch per location per round (as a
  ``--location`` daemon's writer would), for R rounds (10), the clock one
  interval on per round. Printed: µs of CPU and wall per recorded run.
- **Monitor**: ``GET /api/v1/monitors/{id}`` through the Flask test client
  (one thread), K requests (500) over the three-location monitors. Printed:
  ms of CPU and wall per request.

Run: ``python -m bench.bench_quorum`` (about 30 s).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from uptime_server import db, migrations
from uptime_server.auth.local_users import mint_local_session
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.clock import ManualClock
from uptime_server.config import load_settings
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, User
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors as monitor_service

EMAIL = "bench@example.com"
START = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
LOCATIONS = ("eu", "us", "ap")


def _monitors(settings: Any, user: User, n: int, locations: list[str]) -> list[Monitor]:
    made = []
    for i in range(n):
        body = {
            "name": f"m-{len(locations)}-{i}",
            "url": f"http://svc{i}.example.com/",
            "type": "http",
            "locations": locations,
        }
        cfg = MonitorConfig.model_validate(body, context={"settings": settings})
        made.append(monitor_service.create_monitor(user, cfg, now=START, settings=settings))
    return made


def _outcome(m: Monitor, location: str, at: datetime, passed: bool) -> CheckOutcome:
    return CheckOutcome(
        monitor_id=m.id,
        monitor_created_at=m.created_at,
        location=location,
        checked_at=at,
        passed=passed,
        response_time=120 if passed else 45,
        status_code=200 if passed else 503,
        error=None if passed else "expected status in [200], got 503",
    )


def bench_recorder(settings: Any, monitors: list[Monitor], locations: list[str], rounds: int):
    recorder = Recorder(settings)
    runs = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for r in range(rounds):
        at = START + timedelta(seconds=60 * (r + 1))
        for j, location in enumerate(locations):
            # Some locations fail now and then: warnings, offline rounds, alerts.
            batch = [_outcome(m, location, at, passed=(m.id + r + j) % 7 != 0) for m in monitors]
            recorder.record(batch, now=at)
            runs += len(batch)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(
        f"recorder, {len(locations)} location(s), {len(monitors)} monitors x {rounds} rounds: "
        f"{1e6 * cpu / runs:.0f} us CPU / run, {1e6 * wall / runs:.0f} us wall / run"
    )


def bench_monitor(settings: Any, monitors: list[Monitor], requests: int) -> None:
    from uptime_server.app import create_app

    clock = ManualClock(START + timedelta(minutes=20))
    app = create_app(settings, clock=clock, bind_database=False)
    token = mint_local_session(settings, email=EMAIL, clock=clock)
    client = app.test_client()
    client.set_cookie("session_cookie", token)
    ids = [m.id for m in monitors]
    for mid in ids[:20]:  # warm the pools and caches
        assert client.get(f"/api/v1/monitors/{mid}").status_code == 200
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(requests):
        response = client.get(f"/api/v1/monitors/{ids[i % len(ids)]}")
        assert response.status_code == 200
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    print(
        f"GET /api/v1/monitors/{{id}}, {requests} requests: "
        f"{1e3 * cpu / requests:.2f} ms CPU / request, {1e3 * wall / requests:.2f} ms wall"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            UPTIME_DATA_DIR=str(Path(tmp) / "data"),
            UPTIME_DATABASE_URL=f"sqlite:///{Path(tmp) / 'uptime.db'}",
            UPTIME_SECRET_KEY="bench-quorum",
            UPTIME_LOCATIONS="local," + ",".join(LOCATIONS),
            UPTIME_MIN_CHECK_INTERVAL="1",
            UPTIME_MAX_MONITORS_PER_USER="100000",
            UPTIME_RATE_LIMIT="off",
        )
        settings = load_settings()
        database = db.bind(settings.database_url)
        migrations.migrate(database)
        mint_local_session(settings, email=EMAIL, clock=ManualClock(START))
        with database.connection_context():
            user = User.get(User.email == EMAIL)
            one = _monitors(settings, user, args.monitors, ["local"])
            three = _monitors(settings, user, args.monitors, list(LOCATIONS))
        bench_recorder(settings, one, ["local"], args.rounds)
        bench_recorder(settings, three, list(LOCATIONS), args.rounds)
        bench_monitor(settings, three, args.requests)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
