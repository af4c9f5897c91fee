"""API latency with 10,000 monitors of one user, through a real waitress server.

Builds a database (SQLite, and PostgreSQL when reachable) holding N monitors
of one user with their alert settings and scheduling rows, plus roll-up
history for the first page (24 h of 5-minute buckets) and 30 days of it for
the first 50 monitors. Then serves the app with waitress on 127.0.0.1 and
times, over keep-alive HTTP with ``requests``:

- ``GET /api/v1/monitors?limit=100`` (first page, and a page in the middle);
- ``GET /api/v1/monitors/{id}`` for monitors with 30 days of history;
- ``GET /metrics`` with the metrics token (per-monitor series of all N
  monitors): the scrape served from the snapshot, the first scrape after a
  refresh (it encodes the series), and the refresh itself, which the daemon
  runs every ``UPTIME_METRICS_REFRESH_INTERVAL`` off the request path.

Rate limiting is off. Run: ``make bench-api`` or
``python -m bench.bench_api [--monitors N] [--requests N] [--backend sqlite|postgres|both]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from tests.live_server import serving
from tests.pg import Unreachable, scratch_database
from uptime_server import db, migrations
from uptime_server.app import create_app
from uptime_server.auth.local_users import mint_local_session
from uptime_server.config import load_settings
from uptime_server.models import AlertSettings, Monitor, MonitorLocation, Rollup, User
from uptime_server.stats.rollups import encode_hist, percentile
from uptime_server.wsgi.context import app_state

EMAIL = "bench@example.com"
BATCH = 500


def build(n_monitors: int, now: datetime) -> None:
    """Fill the bound database: one user, N monitors, their rows, some history."""
    user = User.get(User.email == EMAIL)
    rows = [
        {
            "user": user.id,
            "team": user.personal_team_id,
            "name": f"service-{i:05d}",
            "url": f"https://svc{i}.example.com/health",
            "type": "https" if i % 2 else "http",
            "status": ("online", "online", "online", "warning", "offline")[i % 5],
            "response_time": 40 + i % 200,
            "last_check": now,
            "created_at": now,
            "updated_at": now,
        }
        for i in range(n_monitors)
    ]
    with db.write_tx():
        for start in range(0, len(rows), BATCH):
            Monitor.insert_many(rows[start : start + BATCH]).execute()
    ids = [mid for (mid,) in Monitor.select(Monitor.id).order_by(Monitor.id).tuples()]
    _insert(AlertSettings, [{"monitor": mid} for mid in ids])
    _insert(
        MonitorLocation,
        [{"monitor": mid, "location": "local", "next_check_at": now} for mid in ids],
    )
    spans = {mid: timedelta(days=30) for mid in ids[:50]}
    spans.update({mid: timedelta(hours=24) for mid in ids[50:100]})
    _add_history(spans, now)


def _insert(model: Any, rows: list[dict[str, Any]]) -> None:
    with db.write_tx():
        for start in range(0, len(rows), BATCH):
            model.insert_many(rows[start : start + BATCH]).execute()


def _add_history(spans: dict[int, timedelta], end: datetime) -> None:
    """Roll-ups over each monitor's span before *end*, as the engine writes them: 5m, 1h, 1d.

    Twelve checks every five minutes, now and then a failure.
    """
    last = int(end.timestamp()) // 300 * 300
    cells: dict[tuple[int, int, int], list[int]] = {}
    for mid, span in spans.items():
        for bucket in range(last - int(span.total_seconds()) + 300, last + 1, 300):
            failed = 1 if (bucket // 300 + mid) % 97 == 0 else 0
            for res in (300, 3600, 86400):
                cell = cells.setdefault((mid, res, bucket // res * res), [0, 0])
                cell[0] += 12
                cell[1] += failed
    rows = [
        {
            "monitor": mid,
            "resolution": res,
            "bucket": bucket,
            "checks": checks,
            "failed": failed,
            "rt_count": checks - failed,
            "rt_sum": (checks - failed) * 80,
            "rt_min": 60,
            "rt_max": 120,
            "p95": percentile({222: checks - failed}, 0.95),
            "hist": encode_hist({222: checks - failed}),
        }
        for (mid, res, bucket), (checks, failed) in cells.items()
    ]
    _insert(Rollup, rows)


def timed(call: Callable[[], requests.Response], count: int) -> list[float]:
    for _ in range(10):  # warm-up: connections, caches, the pool
        call().raise_for_status()
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        response = call()
        samples.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return samples


def report(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    print(
        f"  {label:<44} median {statistics.median(ordered):6.2f} ms   "
        f"p95 {p95:6.2f} ms   min {ordered[0]:6.2f} ms   (n={len(ordered)})"
    )


def run(backend: str, database_url: str, data_dir: Path, n_monitors: int, count: int) -> None:
    env = {
        "UPTIME_DATA_DIR": str(data_dir),
        "UPTIME_DATABASE_URL": database_url,
        "UPTIME_RATE_LIMIT": "off",
        "UPTIME_SECRET_KEY": "bench",
        "UPTIME_MAX_MONITORS_PER_USER": str(n_monitors),
        "UPTIME_METRICS_TOKEN": "bench",
    }
    settings = load_settings(env)
    database = db.bind(settings.database_url)
    with database.connection_context():
        migrations.migrate(database)
    token = mint_local_session(settings, email=EMAIL)
    now = datetime.now(UTC)
    started = time.perf_counter()
    with database.connection_context():
        build(n_monitors, now)
        if not db.is_sqlite():
            # What autovacuum does soon after a bulk load; the planner's
            # choices with fresh statistics are the ones production sees.
            database.execute_sql("ANALYZE")
        first_ids = [
            m for (m,) in Monitor.select(Monitor.id).order_by(Monitor.id).limit(50).tuples()
        ]
    print(f"{backend}: {n_monitors} monitors built in {time.perf_counter() - started:.1f} s")
    app = create_app(settings, bind_database=False)
    middle = n_monitors // 200  # a page in the middle of the list
    with serving(app, ident="bench") as base, requests.Session() as http:
        http.headers["Cookie"] = f"session_cookie={token}"
        first = http.get(f"{base}/api/v1/monitors?limit=100").json()
        assert first["pagination"]["total"] == n_monitors, first["pagination"]
        assert len(first["data"]) == 100 and first["data"][0]["uptime_24h"] is not None
        report(
            "GET /api/v1/monitors?limit=100",
            timed(lambda: http.get(f"{base}/api/v1/monitors?limit=100"), count),
        )
        report(
            f"GET /api/v1/monitors?limit=100&page={middle}",
            timed(lambda: http.get(f"{base}/api/v1/monitors?limit=100&page={middle}"), count),
        )
        cycle = iter(first_ids * (count // len(first_ids) + 2))
        one = http.get(f"{base}/api/v1/monitors/{first_ids[0]}").json()["data"]
        assert one["uptime_30d"] is not None
        report(
            "GET /api/v1/monitors/{id} (30 days of history)",
            timed(lambda: http.get(f"{base}/api/v1/monitors/{next(cycle)}"), count),
        )
        bench_metrics(app, base, http, n_monitors, count)
    if not database.is_closed():
        database.close()
    close_all = getattr(database, "close_all", None)
    if close_all:
        close_all()


def bench_metrics(app: Any, base: str, http: requests.Session, n_monitors: int, count: int):
    cache = app_state(app).services["metrics_cache"]
    bearer = {"Authorization": "Bearer bench"}

    def refresh() -> None:
        with db.database.connection_context():
            cache.refresh(datetime.now(UTC))

    refreshes, first_scrapes = [], []
    for _ in range(5):
        started = time.perf_counter()
        refresh()
        refreshes.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        http.get(f"{base}/metrics", headers=bearer).raise_for_status()
        first_scrapes.append((time.perf_counter() - started) * 1000)
    body = http.get(f"{base}/metrics", headers=bearer).text
    assert body.count("uptime_monitor_paused{") == n_monitors
    report(f"metrics refresh, {n_monitors} monitors (daemon loop)", refreshes)
    report("GET /metrics, first after a refresh", first_scrapes)
    samples = timed(lambda: http.get(f"{base}/metrics", headers=bearer), count)
    report("GET /metrics (from the snapshot)", samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="uptime-bench-") as tmp:
        if args.backend in ("sqlite", "both"):
            url = f"sqlite:///{Path(tmp) / 'bench.db'}"
            run("sqlite", url, Path(tmp) / "data", args.monitors, args.requests)
        if args.backend in ("postgres", "both"):
            try:
                with scratch_database("uptime_bench", timeout=3) as url:
                    run("postgresql", url, Path(tmp) / "data", args.monitors, args.requests)
            except Unreachable as exc:
                print(f"postgresql: skipped, unreachable ({exc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
