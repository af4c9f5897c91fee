"""``make bench-jsonpath``: one pathological JSONPath monitor does not hold up the others.

Runs the engine (``bench.engine_run steady``) with N ordinary monitors against
a local target, twice: alone, then with one monitor whose ``json_path`` is
``$..*..*..*.nope`` on a 900-byte body of nested arrays (inserted straight
into the database: validation refuses it). jsonpath-ng's own find() takes
seconds on it; the engine gives it 1 s on a worker thread and fails it.
Prints p50/p99/max dispatch lag of the ordinary monitors in both runs
(figures, not assertions), and what the pathological monitor's runs recorded.
``--baseline`` also times one uncapped jsonpath-ng find() of ``$..*..*..*``
here, on a shallower body (the full one takes minutes).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.bench_checks import _engine, _env
from bench.seed import reset, seed_monitors
from bench.target import NESTED_JSON, Target, start_target
from uptime_server import db as dbmod
from uptime_server.models import AlertSettings, CheckRun, Monitor, MonitorLocation, User

PATHOLOGICAL = "$..*..*..*.nope"


def add_pathological(url: str, target: str, *, interval: int, first_due: datetime) -> int:
    """One monitor with PATHOLOGICAL as its json_path, past validation; its id."""
    database = dbmod.bind(url)
    now = datetime.now(UTC)
    with database.connection_context(), database.atomic():
        user = User.get(User.email == "bench@example.com")
        monitor = Monitor.create(
            user=user,
            team=user.personal_team_id,
            name="pathological",
            url=target,
            type="http",
            timeout=5,
            check_interval=interval,
            json_path=PATHOLOGICAL,
            created_at=now,
            updated_at=now,
            status="online",
        )
        AlertSettings.create(monitor=monitor)
        MonitorLocation.create(
            monitor=monitor, location="local", next_check_at=first_due, last_status="online"
        )
    database.close()
    return monitor.id


def recorded_errors(url: str, monitor_id: int) -> Counter[str]:
    database = dbmod.bind(url)
    with database.connection_context():
        runs = CheckRun.select(CheckRun.error).where(CheckRun.monitor == monitor_id)
        errors = Counter(run.error or "passed" for run in runs)
    database.close()
    return errors


def run(args: argparse.Namespace, workdir: Path, target: Target, with_pathological: bool) -> dict:
    url = args.database_url or f"sqlite:///{workdir / 'jsonpath.db'}"
    reset(url)
    # Due once the engine is up (imports, database worker): start-up is not lag.
    first_due = datetime.now(UTC) + timedelta(seconds=args.warmup)
    seed_monitors(
        url,
        target.http_url,
        args.monitors,
        interval=args.interval,
        first_due=first_due,
        spread=args.interval,
    )
    bad_id = None
    if with_pathological:
        bad_id = add_pathological(
            url,
            target.http_url + "nested",
            interval=args.pathological_interval,
            first_due=first_due,
        )
    result = _engine(
        "steady", args.monitors, args.seconds, _env(args, workdir, url, target.ca_file)
    )
    result["pathological"] = recorded_errors(url, bad_id) if bad_id else None
    return result


def report(label: str, result: dict) -> None:
    ms = {k: (result[k] or 0) * 1000 for k in ("lag_p50", "lag_p99", "lag_max")}
    print(
        f"{label:24} dispatch lag p50 {ms['lag_p50']:6.1f} ms   p99 {ms['lag_p99']:7.1f} ms   "
        f"max {ms['lag_max']:7.1f} ms   ({result['dispatched']} checks, "
        f"{result['recorded']} recorded)"
    )
    bad = result["pathological"]
    if bad is not None:
        for error, count in bad.most_common():
            print(f"{'':24} pathological monitor: {count} run(s): {error}")


def baseline(depth: int = 250) -> None:
    """One uncapped jsonpath-ng find(), as the engine ran it before, on a smaller body.

    The cost is cubic in the depth: on the 900-byte body it runs minutes and
    builds 15 million matches, so a shallower one stands in for it.
    """
    from jsonpath_ng.ext import parse

    body = "[" * depth + "]" * depth
    path = PATHOLOGICAL.removesuffix(".nope")
    started = time.perf_counter()
    matches = parse(path).find(json.loads(body))
    print(
        f"baseline: jsonpath-ng find() of {path} on a {len(body)}-byte body: "
        f"{time.perf_counter() - started:.1f} s, {len(matches)} matches, on the event loop "
        f"before this change (x{(450 / depth) ** 3:.0f} for the {len(NESTED_JSON)}-byte one)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=500)
    parser.add_argument("--interval", type=int, default=5, help="ordinary monitors, seconds")
    parser.add_argument("--pathological-interval", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30, help="each run, warm-up included")
    parser.add_argument("--warmup", type=float, default=5, help="seconds before the first check")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--database-url", help="postgresql://... (default: a SQLite file)")
    parser.add_argument("--baseline", action="store_true", help="time jsonpath-ng's find() too")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="uptime-bench-jsonpath-"))
    target = start_target(workdir, prefer_nginx=False)
    db = "PostgreSQL" if args.database_url else "SQLite"
    print(
        f"target: {target.kind} (separate process); database: {db}; {args.monitors} monitors "
        f"every {args.interval}s ({args.monitors / args.interval:.0f} checks/s) for "
        f"{args.seconds:.0f}s; pathological: {PATHOLOGICAL} every "
        f"{args.pathological_interval}s on {len(NESTED_JSON)} bytes"
    )
    try:
        if args.baseline:
            baseline()
        report("ordinary monitors only", run(args, workdir, target, False))
        report("+ 1 pathological", run(args, workdir, target, True))
    finally:
        target.stop()


if __name__ == "__main__":
    main()
