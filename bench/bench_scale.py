"""``make bench-scale``: two engine processes on one PostgreSQL beside blackbox_exporter.

Prints (figures, not assertions), over HTTP and over HTTPS, best of
``--rounds`` alternating rounds:

- two engine processes (``bench.engine_run``, each with its recorder child:
  the scheduler of ``uptime server run --no-api``) sharing ``--monitors``
  monitors, all due at once, in a scratch PostgreSQL database: checks
  recorded per second by both together, and the CPU per check of the
  engines and their recorders;
- prometheus-blackbox-exporter's ``http_2xx`` prober on the same target,
  driven through ``/probe`` at its own saturation (``--blackbox-clients``)
  in the same run: successful probes per second and its CPU per probe;
- their ratio (the goal: >= 1), and where the machine's CPU went in the
  engines' round (engines, recorders, target, PostgreSQL server), so that
  when the ratio is short it says what limits it.

The target is the bench target (nginx with one worker if installed, else the
aiohttp server) in its own process; PostgreSQL is the test server
(``UPTIME_TEST_PG_URL``); the database is created and dropped by the bench.
Every process shares the machine's cores: on 2 cores the target, PostgreSQL,
the engines and the exporter's driver all compete.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.bench_checks import _env
from bench.blackbox import INSTALL_HINT, Blackbox, BlackboxResult, find_binary
from bench.engine_run import cpu_s
from bench.pg_cpu import postgres_cpu_s
from bench.seed import reset, seed_monitors
from bench.target import Target, start_target
from tests.pg import Unreachable, scratch_database


def _stored_runs(url: str) -> int:
    from uptime_server import db
    from uptime_server.models import CheckRun

    database = db.bind(url)
    with database.connection_context():
        count = CheckRun.select().count()
    database.close()
    return count


def _engines(args: argparse.Namespace, env: dict[str, str]) -> list[dict]:
    """``--processes`` engine processes started together; their JSON reports."""
    env = {**env, "BENCH_SHARED": "1"}
    cmd = [sys.executable, "-m", "bench.engine_run", "burst", str(args.monitors)]
    procs = [
        subprocess.Popen(
            [*cmd, str(args.burst_timeout)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(args.processes)
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=args.burst_timeout + 120)
        if proc.returncode != 0:
            raise RuntimeError(f"engine run failed:\n{err[-4000:]}")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def engine_round(args: argparse.Namespace, url: str, target: Target, scheme_url: str) -> dict:
    reset(url)
    seed_monitors(
        url, scheme_url, args.monitors, interval=3600, first_due=datetime.now(UTC), spread=0
    )
    workdir = Path(tempfile.mkdtemp(prefix="uptime-scale-"))
    target_cpu, pg_cpu, wall = (
        cpu_s(f"/proc/{target.process.pid}/stat"),
        postgres_cpu_s(),
        time.perf_counter(),
    )
    reports = _engines(args, _env(args, workdir, url, target.ca_file))
    wall = time.perf_counter() - wall
    # Runs in the database: a result handed to a recorder after its lease was
    # lost (another process took the check over) is refused, not stored.
    recorded = _stored_runs(url)
    # Each process times from its own start; the slower one's last check ends the burst.
    seconds = max((r["last_recorded_s"] or r["elapsed"]) for r in reports)
    return {
        "recorded": recorded,
        "rate": recorded / seconds,
        "per_process": [r["recorded"] for r in reports],
        "refused": sum(r["recorded"] for r in reports) - recorded,
        "engine_cpu": sum(r["cpu_s"] for r in reports),
        "recorder_cpu": sum(r["recorder_cpu_s"] or 0.0 for r in reports),
        "target_cpu": cpu_s(f"/proc/{target.process.pid}/stat") - target_cpu,
        "pg_cpu": postgres_cpu_s() - pg_cpu,
        "wall": wall,
        "seconds": seconds,
        "rss_mb": [r["rss_mb"] for r in reports],
    }


def _measure(
    args: argparse.Namespace, url: str, target: Target, blackbox: Blackbox | None, scheme: str
) -> None:
    scheme_url = target.http_url if scheme == "http" else target.https_url
    rounds: list[dict] = []
    probes: list[BlackboxResult] = []
    for _ in range(args.rounds):
        rounds.append(engine_round(args, url, target, scheme_url))
        if blackbox is not None:
            probes.append(
                blackbox.measure(
                    scheme_url,
                    concurrency=args.blackbox_clients,
                    seconds=args.blackbox_seconds,
                    module="http_2xx",
                )
            )
    best = max(rounds, key=lambda r: r["rate"])
    label = scheme.upper()
    per_check = (best["engine_cpu"] + best["recorder_cpu"]) / max(best["recorded"], 1)
    print(
        f"{label:5} engines ({args.processes} processes, PostgreSQL): {best['rate']:6.0f} checks/s "
        f"recorded   ({per_check * 1e6:.0f} µs CPU per check: engines "
        f"{best['engine_cpu'] / best['recorded'] * 1e6:.0f}, recorders "
        f"{best['recorder_cpu'] / best['recorded'] * 1e6:.0f})   rounds: "
        + " ".join(f"{r['rate']:.0f}" for r in rounds)
        + f"   split {'/'.join(str(n) for n in best['per_process'])}"
        + (f", {best['refused']} late results refused" if best["refused"] else "")
    )
    spent = {
        "engines": best["engine_cpu"],
        "recorders": best["recorder_cpu"],
        "target": best["target_cpu"],
    }
    if best["pg_cpu"] >= 0:  # backends of others that ended can make it negative
        spent["PostgreSQL (all clients)"] = best["pg_cpu"]
    cores = sum(spent.values()) / best["seconds"]
    print(
        f"{label:5}   CPU per recorded check (µs): "
        + ", ".join(f"{k} {v / best['recorded'] * 1e6:.0f}" for k, v in spent.items())
        + f"; {cores:.2f} of {os.cpu_count()} cores busy; load average {os.getloadavg()[0]:.1f}"
    )
    if not probes:
        print(f"{label:5} blackbox_exporter not available ({INSTALL_HINT}); no ratio")
        return
    top = max(probes, key=lambda p: p.probes_s)
    per_probe = top.cpu_s / max(top.probes_s * args.blackbox_seconds, 1)
    print(
        f"{label:5} blackbox_exporter http_2xx:        {top.probes_s:6.0f} probes/s   "
        f"({per_probe * 1e6:.0f} µs exporter CPU per probe, driver "
        f"{top.client_cpu_s / max(top.probes_s * args.blackbox_seconds, 1) * 1e6:.0f} µs; "
        f"{args.blackbox_clients} clients)   rounds: "
        + " ".join(f"{p.probes_s:.0f}" for p in probes)
        + (f"   ({top.failed} failed)" if top.failed else "")
    )
    print(f"{label:5} engines/blackbox = {best['rate'] / top.probes_s:.2f}   (goal >= 1)")
    limit = max(spent, key=lambda k: spent[k])
    cpus = os.cpu_count() or 1
    if cores < 0.8 * cpus:
        print(
            f"{label:5}   limit: the machine: these processes got {cores:.2f} of {cpus} cores "
            f"(other work); compare CPU per check: engines + recorders "
            f"{per_check * 1e6:.0f} µs vs exporter {per_probe * 1e6:.0f} µs "
            f"(+ its driver); the largest share was {limit}"
        )
    else:
        print(f"{label:5}   limit: CPU; the largest share in the engines' round: {limit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=10000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--burst-timeout", type=float, default=300)
    parser.add_argument("--blackbox-seconds", type=float, default=10)
    parser.add_argument("--blackbox-clients", type=int, default=64)
    parser.add_argument("--target", choices=("auto", "aiohttp"), default="auto")
    parser.add_argument("--only", choices=("all", "http", "https"), default="all")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="uptime-bench-scale-"))
    target = start_target(workdir, prefer_nginx=args.target == "auto")
    binary = find_binary()
    blackbox = Blackbox(binary, workdir, target.ca_file) if binary else None
    print(
        f"target: {target.kind} (separate process); {args.monitors} monitors all due; "
        f"{args.processes} engine processes, concurrency {args.concurrency} each; "
        f"best of {args.rounds}"
    )
    try:
        with scratch_database("uptime_bench_scale", timeout=3) as url:
            for scheme in ("http", "https"):
                if args.only in ("all", scheme):
                    _measure(args, url, target, blackbox, scheme)
    except Unreachable as exc:
        print(f"PostgreSQL is not reachable ({exc}); bench-scale needs it")
    finally:
        if blackbox is not None:
            blackbox.stop()
        target.stop()


if __name__ == "__main__":
    main()
