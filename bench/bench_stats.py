"""make bench-stats: stats latency vs. history length, list page at 10,000 monitors, DB size.

Two SQLite databases are generated in a temporary directory:

- history: one monitor with 10 days and one with 90 days of 1-minute checks
  (response times around 120 ms with a tail, a few outages with their
  downtime/recovery notifications). The last ``--real-days`` days go through
  the real writer (``Recorder.record``); older days through the bulk path
  below, which writes the same raw rows and the roll-ups ``rollups.aggregate``
  computes from the same samples (tests/stats/test_bench_bulk.py proves the
  two paths leave identical rows). Figures: stats latency per period for
  both monitors and their ratio, and the database size per monitor per day.
- fleet: 10,000 monitors of one user with ``--fleet-days`` days of roll-ups
  (bulk; 16 sample patterns shared between monitors so generation stays
  quick; no raw rows, which neither the list nor /metrics read). Figures:
  list page (limit=100) latency, one monitor object, /metrics.

Latencies go through the Flask app (session cookie, routing, JSON), not a
socket, and are wall-clock per request.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import peewee

from uptime_server import db as dbmod
from uptime_server import migrations
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.clock import ManualClock
from uptime_server.config import Settings, load_settings
from uptime_server.db.bulk import Insert
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, Notification, User
from uptime_server.stats import rollups

NOW = datetime(2026, 11, 22, 12, 2, 30, tzinfo=UTC)
DAY = 86400
ROLLUP_COLUMNS = ("monitor_id", "resolution", "bucket", *rollups.Aggregate().as_values())
RUN_COLUMNS = (
    "monitor_id",
    "location",
    "checked_at",
    "status",
    "response_time",
    "status_code",
    "error",
    "attempts",
)


# -- synthetic history -------------------------------------------------------


def samples(seed: int, start: int, end: int, step: int = 60) -> list[tuple[int, bool, int | None]]:
    """(epoch, passed, response_time) every *step* s: ~120 ms, a tail, outages."""
    rng = random.Random(seed)
    out: list[tuple[int, bool, int | None]] = []
    down = 0
    for t in range(start + rng.randrange(step), end, step):
        if down == 0 and rng.random() < 1 / (2 * 1440):  # about one outage in two days
            down = rng.randint(3, 30)
        if down:
            down -= 1
            out.append((t, False, None))
            continue
        rt = int(rng.lognormvariate(math.log(120), 0.35)) * (10 if rng.random() < 0.01 else 1)
        out.append((t, True, max(1, rt)))
    return out


def outcomes(monitor: Monitor, items: Iterable[tuple[int, bool, int | None]]) -> list[CheckOutcome]:
    return [
        CheckOutcome(
            monitor_id=monitor.id,
            monitor_created_at=monitor.created_at,
            location="local",
            checked_at=datetime.fromtimestamp(t, UTC),
            passed=passed,
            response_time=rt,
            status_code=200 if passed else 503,
            error=None if passed else "expected status in [200], got 503",
        )
        for t, passed, rt in items
    ]


def real_feed(settings: Settings, monitor: Monitor, items: Sequence[tuple]) -> None:
    """Through the real writer, one batch per hour of checks."""
    recorder = Recorder(settings)
    for i in range(0, len(items), 60):
        batch = outcomes(monitor, items[i : i + 60])
        recorder.record(batch, now=batch[-1].checked_at)


def bulk_feed(monitor: Monitor, items: Sequence[tuple[int, bool, int | None]]) -> None:
    """The bulk path: the raw rows, roll-ups and notifications the writer would leave.

    *items* must not share a roll-up bucket with runs already recorded
    (the benchmark splits at midnight), since rows are inserted, not merged.
    """
    runs = [
        (
            monitor.id,
            "local",
            datetime.fromtimestamp(t, UTC).replace(tzinfo=None),
            "online" if passed else "offline",
            rt,
            200 if passed else 503,
            None if passed else "expected status in [200], got 503",
            1,
        )
        for t, passed, rt in items
    ]
    cells = rollups.aggregate(rollups.RunSample(monitor.id, t, p, rt) for t, p, rt in items)
    with dbmod.database.atomic():
        insert_rows("check_runs", RUN_COLUMNS, runs)
        insert_rows("rollups", ROLLUP_COLUMNS, rollup_rows(cells))
        insert_incidents(monitor, items)


def rollup_rows(cells: dict[rollups.Key, rollups.Aggregate]) -> list[tuple]:
    return [(*key, *cell.as_values().values()) for key, cell in sorted(cells.items())]


def insert_rows(table: str, columns: Sequence[str], rows: Sequence[tuple]) -> None:
    Insert(table, tuple(columns)).run(rows)


def insert_incidents(monitor: Monitor, items: Sequence[tuple[int, bool, int | None]]) -> None:
    """A resolved downtime and its recovery notification per outage (threshold 1)."""
    rows, started = [], None
    for t, passed, _ in items:
        at = datetime.fromtimestamp(t, UTC)
        if not passed and started is None:
            started = at
        elif passed and started is not None:
            seconds = int((at - started).total_seconds())
            for kind in ("downtime", "recovery"):
                rows.append(
                    {
                        "monitor": monitor.id,
                        "user": monitor.user_id,
                        "team": monitor.team_id,
                        "type": kind,
                        "message": f"{monitor.name} is {'DOWN' if kind == 'downtime' else 'UP'}",
                        "status": "resolved",
                        "started_at": started,
                        "resolved_at": at,
                        "duration": seconds,
                        "created_at": started if kind == "downtime" else at,
                    }
                )
            started = None
    for chunk in peewee.chunked(rows, 200):
        Notification.insert_many(chunk).execute()


# -- databases ---------------------------------------------------------------


def open_db(path: Path, **env: str) -> Settings:
    settings = load_settings(
        {
            "UPTIME_DATA_DIR": str(path.parent / "data"),
            "UPTIME_DATABASE_URL": f"sqlite:///{path}",
            "UPTIME_SECRET_KEY": "bench",
            "UPTIME_RATE_LIMIT": "off",
            "UPTIME_MAX_MONITORS_PER_USER": "100000",
            **env,
        }
    )
    migrations.migrate(dbmod.bind(settings.database_url))
    return settings


def new_monitor(settings: Settings, user: User, name: str) -> Monitor:
    from uptime_server.schemas.monitor_config import MonitorConfig
    from uptime_server.services import monitors as monitor_service

    cfg = MonitorConfig.model_validate(
        {"name": name, "url": "https://example.com/health", "type": "https"},
        context={"settings": settings},
    )
    with dbmod.database.connection_context():
        return monitor_service.create_monitor(user, cfg, now=NOW, settings=settings)


def build_history(settings: Settings, user: User, days: int, real_days: int) -> Monitor:
    monitor = new_monitor(settings, user, f"history-{days}d")
    split = (int(NOW.timestamp()) // DAY - real_days) * DAY  # midnight: no shared buckets
    items = samples(days, int(NOW.timestamp()) - days * DAY, int(NOW.timestamp()))
    with dbmod.database.connection_context():
        bulk_feed(monitor, [s for s in items if s[0] < split])
    real_feed(settings, monitor, [s for s in items if s[0] >= split])
    return monitor


def build_fleet(user: User, count: int, days: int, patterns: int = 16) -> list[int]:
    """*count* monitors; roll-ups of *days* days from shared sample patterns."""
    end = int(NOW.timestamp())
    pattern_rows = []
    for seed in range(patterns):
        items = samples(1000 + seed, end - days * DAY, end)
        cells = rollups.aggregate(rollups.RunSample(0, t, p, rt) for t, p, rt in items)
        pattern_rows.append([row[1:] for row in rollup_rows(cells)])
    with dbmod.database.connection_context():
        for chunk in peewee.chunked(range(count), 500):
            with dbmod.database.atomic():
                Monitor.insert_many([fleet_monitor(user, i) for i in chunk]).execute()
        ids = [m.id for m in Monitor.select(Monitor.id).where(Monitor.user == user)]
        for chunk in peewee.chunked(ids, 200):
            with dbmod.database.atomic():
                rows = [(mid, *row) for mid in chunk for row in pattern_rows[mid % patterns]]
                insert_rows("rollups", ROLLUP_COLUMNS, rows)
    return ids


def fleet_monitor(user: User, i: int) -> dict[str, Any]:
    return {
        "user": user.id,
        "team": user.personal_team_id,
        "name": f"service-{i:05d}",
        "url": f"https://svc{i}.example.com/health",
        "type": "https",
        "status": "online" if i % 50 else "offline",
        "response_time": 100 + i % 200,
        "last_check": NOW,
        "cert_expires_at": NOW + timedelta(days=60),
        "created_at": NOW,
        "updated_at": NOW,
    }


# -- measuring ---------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    p50: float  # wall clock, ms
    p95: float
    cpu50: float  # CPU time of this process, ms: steadier on a busy machine

    def __str__(self) -> str:
        return f"{self.p50:.2f} / {self.p95:.2f}"


def timed(calls: Sequence[Callable[[], Any]], n: int, warmup: int = 3) -> list[Figures]:
    """Time *calls* interleaved (a, b, a, b, ...), so drift in load hits all alike."""
    for _ in range(warmup):
        for call in calls:
            call()
    wall: list[list[float]] = [[] for _ in calls]
    cpu: list[list[float]] = [[] for _ in calls]
    for _ in range(n):
        for i, call in enumerate(calls):
            w0, c0 = time.perf_counter(), time.process_time()
            call()
            cpu[i].append((time.process_time() - c0) * 1000)
            wall[i].append((time.perf_counter() - w0) * 1000)
    out = []
    for w, c in zip(wall, cpu, strict=True):
        w.sort()
        out.append(Figures(statistics.median(w), w[math.ceil(0.95 * n) - 1], statistics.median(c)))
    return out


def client_for(settings: Settings, email: str = "bench@example.com") -> Any:
    from uptime_server.app import create_app
    from uptime_server.auth.local_users import mint_local_session

    clock = ManualClock(NOW)
    app = create_app(settings, clock=clock)
    token = mint_local_session(settings, email=email, clock=clock)
    client = app.test_client()
    client.set_cookie("session_cookie", token)
    return client


def get_ok(client: Any, path: str, **kw: Any) -> Callable[[], Any]:
    def call() -> Any:
        r = client.get(path, **kw)
        if r.status_code != 200:
            raise RuntimeError(f"{path}: {r.status_code} {r.get_data(as_text=True)[:200]}")
        return r

    return call


def table_bytes(names: Sequence[str]) -> int:
    """Pages used by tables and their indexes (SQLite's dbstat)."""
    marks = ", ".join("?" * len(names))
    sql = (
        "SELECT SUM(s.pgsize) FROM dbstat s JOIN sqlite_master m ON m.name = s.name"
        f" WHERE m.tbl_name IN ({marks})"
    )
    return dbmod.database.execute_sql(sql, list(names)).fetchone()[0] or 0


def rollup_bytes_by_resolution() -> dict[int, int]:
    """Size of each resolution's rows, measured on a copy with the same key index."""
    out = {}
    for res in rollups.RESOLUTIONS:
        name = f"bench_rollups_{res}"
        db = dbmod.database
        db.execute_sql(f"CREATE TABLE {name} AS SELECT * FROM rollups WHERE resolution = {res}")
        db.execute_sql(f"CREATE UNIQUE INDEX {name}_pk ON {name} (monitor_id, resolution, bucket)")
        out[res] = table_bytes([name])
        db.execute_sql(f"DROP TABLE {name}")
    return out


def size_report(path: Path, monitor_days: int, raw_days: int = 30) -> list[str]:
    kib, file_size = monitor_days * 1024, path.stat().st_size
    with dbmod.database.connection_context():
        raw = table_bytes(["check_runs"]) / kib
        total = table_bytes(["check_runs", "rollups", "notifications"]) / kib
        per_res = {res: size / kib for res, size in rollup_bytes_by_resolution().items()}
    kept = {res: (keep or 0) // DAY for res, keep in rollups.KEEP.items()}
    steady = raw * raw_days + sum(per_res[r] * kept[r] for r in (300, 3600))
    return [
        f"  file {file_size / 1e6:.1f} MB for {monitor_days} monitor-days;"
        " per monitor per day of 1-minute checks:",
        f"    raw runs {raw:7.1f} KiB   roll-ups 5m {per_res[300]:5.1f} KiB,"
        f" 1h {per_res[3600]:4.1f} KiB, 1d {per_res[86400]:4.1f} KiB   all {total:6.1f} KiB",
        f"  with default retention (raw {raw_days} d, 5m 30 d, 1h 365 d): about"
        f" {steady / 1024:.1f} MiB per monitor, plus {per_res[86400]:.1f} KiB a day for ever",
    ]


def signed_in(path: Path) -> tuple[Settings, Any, User]:
    """A new database at *path*, a test client signed in to it, and its user."""
    settings = open_db(path)
    client = client_for(settings)
    with dbmod.database.connection_context():
        user = User.get(User.email == "bench@example.com")
    return settings, client, user


def history_part(workdir: Path, args: argparse.Namespace) -> list[str]:
    settings, client, user = signed_in(workdir / "history.db")
    t0 = time.perf_counter()
    m10 = build_history(settings, user, 10, args.real_days)
    m90 = build_history(settings, user, 90, args.real_days)
    out = [f"history: generated in {time.perf_counter() - t0:.0f} s"]
    out.append("stats latency, ms (wall p50 / p95), default granularity (90d: 1d)")
    out.append(
        f"  {'period':<8}{'10 days of history':>20}{'90 days of history':>20}"
        f"{'ratio p50':>11}{'ratio CPU':>11}"
    )
    for period in ("24h", "7d", "30d", "90d"):
        a, b = timed(
            [get_ok(client, f"/api/v1/monitors/{m.id}/stats?period={period}") for m in (m10, m90)],
            args.n,
        )
        out.append(
            f"  {period:<8}{a!s:>20}{b!s:>20}{b.p50 / a.p50:>11.2f}{b.cpu50 / a.cpu50:>11.2f}"
        )
    out.append("database size")
    out += size_report(workdir / "history.db", 100)
    return out


def fleet_part(workdir: Path, args: argparse.Namespace) -> list[str]:
    _, client, user = signed_in(workdir / "fleet.db")
    t0 = time.perf_counter()
    ids = build_fleet(user, args.monitors, args.fleet_days)
    out = [f"fleet: {len(ids)} monitors generated in {time.perf_counter() - t0:.0f} s"]
    pages = max(1, len(ids) // 100)
    rng = random.Random(1)
    [page] = timed(
        [lambda: get_ok(client, f"/api/v1/monitors?limit=100&page={rng.randint(1, pages)}")()],
        args.n,
    )
    out.append(f"  list page (limit=100, with uptime_24h): {page} ms (wall p50 / p95)")
    [one] = timed([lambda: get_ok(client, f"/api/v1/monitors/{rng.choice(ids)}")()], args.n)
    out.append(f"  monitor object (uptime 24h/7d/30d):     {one} ms")
    if args.metrics:
        [metrics] = timed([get_ok(client, "/metrics")], 5, warmup=1)
        out.append(f"  /metrics ({len(ids)} monitors):          {metrics} ms")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=10_000)
    parser.add_argument("--fleet-days", type=int, default=2)
    parser.add_argument("--real-days", type=int, default=1)
    parser.add_argument("-n", type=int, default=200, help="requests per figure")
    parser.add_argument("--no-metrics", dest="metrics", action="store_false")
    parser.add_argument("--dir", type=Path, help="keep the databases here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-stats-") as tmp:
        workdir = args.dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for line in history_part(workdir, args) + fleet_part(workdir, args):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
