"""``make bench-checks``: how fast the check engine runs, against a local target.

Prints (figures, not assertions):
(a) the raw ceiling: plain aiohttp with a fresh connection per request, req/s;
(b) the engine with N monitors all due: completed and recorded checks/s, b/a;
(c) a steady run at half of (b), with ``--hanging`` (5 %) of the monitors
    pointed at a listener that accepts and never answers (each such check
    hangs until its 5 s timeout): p50/p99/max dispatch lag and the RSS.
(a) and (b) over HTTP and HTTPS. The target runs in a separate process (nginx
when installed, else aiohttp); the engine runs in a process of its own too.
(e) memory: RSS of the engine plus its recorder process once each of
``--memory-monitors`` (10,000) monitors ran (``--trace-memory``: and where
the engine's Python heap is, by line).
(d) tcp: the engine with N ``tcp://`` monitors of the target's port, completed
and recorded checks/s, beside prometheus-blackbox-exporter's ``tcp_connect``
prober on the same port in the same run (``bench.blackbox``), and their ratio.
SQLite by default; ``--database-url postgresql://...`` for PostgreSQL.

Figures of 2026-11-24 (2 shared cores, aiohttp target; more and their
reading in bench/README.md): HTTP b/a 0.59-0.69 at load 1-9 with the claims
made by the recorder process (CPU per check raw/engine 0.71-0.84; 0.68-0.77
before it, 0.64 before issue 17's changes), HTTPS b/a 0.78 (0.87-0.97);
(c) p99 dispatch lag 63-623 ms at 262-579 checks/s with 5 % hanging
(2026-11-25, a faster machine: 5,218 ms at 1,638 checks/s, where 410
hanging checks held the 200 slots; 71 ms at 1,663 with parked checks,
``engine/probe_loop.py``);
(e) 137 MB for engine + recorder at 10,000 monitors (186 MB before); (d) tcp
engine/blackbox 0.89-1.41.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.blackbox import INSTALL_HINT, Blackbox, find_binary
from bench.raw_ceiling import raw_ceiling
from bench.seed import point_some_at, reset, seed_monitors
from bench.target import HangServer, Target, start_target


def _engine(mode: str, count: int, seconds: float, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.engine_run", mode, str(count), str(seconds)],
        env=env,
        capture_output=True,
        text=True,
        timeout=seconds + 120,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"engine run failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env(args: argparse.Namespace, workdir: Path, url: str, ca_file: str) -> dict[str, str]:
    # The daemon's settings are the bench's, except the collector's
    # thresholds: UPTIME_GC_THRESHOLD=python compares with Python's own.
    kept = ("UPTIME_GC_THRESHOLD",)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_") or k in kept}
    env.update(
        UPTIME_DATABASE_URL=url,
        UPTIME_DATA_DIR=str(workdir / "data"),
        UPTIME_CA_BUNDLE=ca_file,
        UPTIME_CHECK_CONCURRENCY=str(args.concurrency),
        UPTIME_SECRET_KEY="bench",
        UPTIME_LOG_LEVEL="WARNING",
    )
    return env


def _db_url(args: argparse.Namespace, workdir: Path, name: str) -> str:
    return args.database_url or f"sqlite:///{workdir / (name + '.db')}"


def burst(
    args: argparse.Namespace, workdir: Path, target_url: str, ca_file: str, name: str
) -> dict:
    url = _db_url(args, workdir, name)
    reset(url)
    now = datetime.now(UTC)
    seed_monitors(url, target_url, args.monitors, interval=3600, first_due=now, spread=0)
    return _engine("burst", args.monitors, args.burst_timeout, _env(args, workdir, url, ca_file))


def steady(
    args: argparse.Namespace,
    workdir: Path,
    target_url: str,
    ca_file: str,
    rate: float,
    hang_url: str | None = None,
) -> tuple[dict, int, int]:
    interval = max(5, round(args.monitors / rate))
    count = max(1, round(rate * interval))
    url = _db_url(args, workdir, "steady")
    reset(url)
    # The first checks fall due once the engine is up (imports take seconds on a
    # loaded machine): a start-up backlog is not dispatch lag.
    first_due = datetime.now(UTC) + timedelta(seconds=args.warmup)
    seed_monitors(url, target_url, count, interval=interval, first_due=first_due, spread=interval)
    if hang_url is not None and args.hanging > 0:
        point_some_at(url, round(1 / args.hanging), hang_url)
    env = _env(args, workdir, url, ca_file)
    return _engine("steady", count, args.warmup + args.steady_seconds, env), interval, count


def _measure_scheme(
    args: argparse.Namespace, workdir: Path, target: Target, scheme: str, url: str
) -> float:
    """(a) and (b) for one scheme, best of ``--rounds`` alternating rounds; returns best b."""
    raws, bursts = [], []
    for _ in range(args.rounds):
        raws.append(
            raw_ceiling(url, target.ca_file, concurrency=args.concurrency, seconds=args.raw_seconds)
        )
        bursts.append(burst(args, workdir, url, target.ca_file, f"burst-{scheme}"))
    raw, raw_cpu = max(raws)
    best = max(bursts, key=lambda r: r["recorded"] / (r["recorded_s"] or r["elapsed"]))
    completed = args.monitors / (best["completed_s"] or best["elapsed"])
    recorded = best["recorded"] / (best["recorded_s"] or best["elapsed"])
    engine_cpu = best["cpu_s"] / max(best["recorded"], 1)
    label = scheme.upper()
    print(
        f"{label:5} (a) raw ceiling       {raw:7.0f} req/s     "
        f"({raw_cpu * 1e6:.0f} µs CPU per request)   rounds: "
        + " ".join(f"{r:.0f}" for r, _ in raws)
    )
    print(f"{label:5} (b) engine completed  {completed:7.0f} checks/s")
    print(
        f"{label:5} (b) engine recorded   {recorded:7.0f} checks/s  "
        f"({engine_cpu * 1e6:.0f} µs CPU per check)   rounds: "
        + " ".join(f"{r['recorded'] / (r['recorded_s'] or r['elapsed']):.0f}" for r in bursts)
    )
    print(
        f"{label:5}     b/a = {recorded / raw:.2f}   "
        f"(CPU per check, a/b: {raw_cpu / engine_cpu:.2f})"
    )
    print(f"{label:5}     CPU per check (µs): {_cpu_split(best)}")
    return recorded


def _cpu_split(run: dict) -> str:
    """The best run's CPU per recorded check, by engine thread and recorder process."""
    count = max(run["recorded"], 1)
    parts = [
        f"{name} {seconds / count * 1e6:.0f}"
        for name, seconds in sorted(run.get("threads_cpu_s", {}).items())
        if seconds > 0
    ]
    if run.get("recorder_cpu_s") is not None:
        parts.append(f"recorder process {run['recorder_cpu_s'] / count * 1e6:.0f}")
    return ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="best of N for (a) and (b)")
    parser.add_argument("--raw-seconds", type=float, default=4)
    parser.add_argument("--steady-seconds", type=float, default=60)
    parser.add_argument("--burst-timeout", type=float, default=300)
    parser.add_argument("--database-url", help="postgresql://... (default: a SQLite file)")
    parser.add_argument("--target", choices=("auto", "aiohttp"), default="auto")
    parser.add_argument("--skip-steady", action="store_true")
    parser.add_argument(
        "--warmup", type=float, default=10, help="(c): seconds before the first check is due"
    )
    parser.add_argument(
        "--hanging",
        type=float,
        default=0.05,
        help="(c): share of monitors whose target accepts and never answers (0: none)",
    )
    parser.add_argument(
        "--memory-monitors",
        type=int,
        default=10000,
        help="(e): RSS of engine + recorder after a burst of this many monitors (0: skip)",
    )
    parser.add_argument(
        "--trace-memory", action="store_true", help="(e): also the engine's heap by line"
    )
    parser.add_argument(
        "--only", choices=("all", "tcp"), default="all", help="tcp: the tcp phase (d) alone"
    )
    parser.add_argument(
        "--tcp-rounds", type=int, default=2, help="best of N for (d); 0: no tcp phase"
    )
    parser.add_argument("--blackbox-seconds", type=float, default=10)
    parser.add_argument("--blackbox-clients", type=int, default=64)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="uptime-bench-"))
    target = start_target(workdir, prefer_nginx=args.target == "auto")
    db = "PostgreSQL" if args.database_url else "SQLite"
    print(
        f"target: {target.kind} (separate process); database: {db}; "
        f"concurrency {args.concurrency}; {args.monitors} monitors; best of {args.rounds}"
    )
    try:
        if args.only == "all":
            best_http = _measure_scheme(args, workdir, target, "http", target.http_url)
            _measure_scheme(args, workdir, target, "https", target.https_url)
            if not args.skip_steady:
                _steady_report(args, workdir, target, best_http / 2)
            if args.memory_monitors:
                _memory_report(args, workdir, target)
        if args.tcp_rounds > 0:
            _measure_tcp(args, workdir, target)
    finally:
        target.stop()


def _measure_tcp(args: argparse.Namespace, workdir: Path, target: Target) -> None:
    """(d): engine tcp checks/s beside blackbox_exporter's tcp_connect, alternating rounds."""
    hostport = target.http_url.removeprefix("http://").rstrip("/")
    binary = find_binary()
    blackbox = None
    if binary is None:
        print(f"TCP   blackbox_exporter not installed, column skipped ({INSTALL_HINT})")
    else:
        try:
            blackbox = Blackbox(binary, workdir)
        except RuntimeError as exc:  # e.g. it exited at once: the engine column still counts
            print(f"TCP   blackbox_exporter did not start ({exc}), column skipped")
    bursts, probes = [], []
    try:
        for _ in range(args.tcp_rounds):
            bursts.append(burst(args, workdir, f"tcp://{hostport}", target.ca_file, "burst-tcp"))
            if blackbox is not None:
                probes.append(
                    blackbox.measure(
                        hostport, concurrency=args.blackbox_clients, seconds=args.blackbox_seconds
                    )
                )
    finally:
        if blackbox is not None:
            blackbox.stop()
    best = max(bursts, key=lambda r: r["recorded"] / (r["recorded_s"] or r["elapsed"]))
    completed = args.monitors / (best["completed_s"] or best["elapsed"])
    recorded = best["recorded"] / (best["recorded_s"] or best["elapsed"])
    engine_cpu = best["cpu_s"] / max(best["recorded"], 1)
    print(f"TCP   (d) {args.monitors} tcp monitors of {hostport}, best of {args.tcp_rounds}")
    print(f"TCP   (d) engine completed   {completed:7.0f} checks/s")
    print(
        f"TCP   (d) engine recorded    {recorded:7.0f} checks/s  "
        f"({engine_cpu * 1e6:.0f} µs CPU per check)   rounds: "
        + " ".join(f"{r['recorded'] / (r['recorded_s'] or r['elapsed']):.0f}" for r in bursts)
    )
    print(f"TCP       CPU per check (µs): {_cpu_split(best)}")
    if not probes:
        return
    top = max(probes, key=lambda p: p.probes_s)
    per_probe = top.cpu_s / max(top.probes_s * args.blackbox_seconds, 1)
    print(
        f"TCP   (d) blackbox tcp_connect {top.probes_s:5.0f} probes/s  "
        f"({per_probe * 1e6:.0f} µs exporter CPU per probe; {args.blackbox_clients} clients, "
        f"{args.blackbox_seconds:.0f}s)   rounds: " + " ".join(f"{p.probes_s:.0f}" for p in probes)
    )
    print(
        f"          (the clients driving /probe used {top.client_cpu_s:.1f}s CPU of the bench "
        f"process over {args.blackbox_seconds:.0f}s, beside the exporter's {top.cpu_s:.1f}s)"
    )
    if top.failed:
        print(f"          ({top.failed} blackbox probes failed or errored in the best round)")
    print(
        f"TCP       engine/blackbox = {recorded / top.probes_s:.2f} recorded, "
        f"{completed / top.probes_s:.2f} completed   (goal >= 0.7)"
    )


def _steady_report(args: argparse.Namespace, workdir: Path, target: Target, rate: float) -> None:
    hang = HangServer() if args.hanging > 0 else None
    try:
        result, interval, count = steady(
            args, workdir, target.http_url, target.ca_file, rate, hang.url if hang else None
        )
    finally:
        if hang is not None:
            hang.stop()
    ms = {k: (result[k] or 0) * 1000 for k in ("lag_p50", "lag_p99", "lag_max")}
    hanging = f", {args.hanging:.0%} of them hanging until their 5 s timeout" if hang else ""
    print(
        f"HTTP  (c) steady {count / interval:.0f} checks/s ({count} monitors every "
        f"{interval}s{hanging}) for {args.steady_seconds:.0f}s: {result['dispatched']} checks, "
        f"{result['recorded']} recorded"
    )
    print(
        f"          dispatch lag p50 {ms['lag_p50']:.0f} ms, p99 {ms['lag_p99']:.0f} ms, "
        f"max {ms['lag_max']:.0f} ms   (goal: p99 < 1000 ms)"
    )
    rss = result["rss_mb"]
    print(
        f"          RSS: engine {rss.get('VmRSS')} MB (peak {rss.get('VmHWM')} MB) "
        f"+ recorder process {rss.get('recorder_VmRSS', 0)} MB "
        f"= {rss.get('VmRSS', 0) + rss.get('recorder_VmRSS', 0):.1f} MB"
    )


def _memory_report(args: argparse.Namespace, workdir: Path, target: Target) -> None:
    """(e): RSS of the engine and its recorder child after every one of N monitors ran."""
    memory_args = argparse.Namespace(**{**vars(args), "monitors": args.memory_monitors})
    result = burst(memory_args, workdir, target.http_url, target.ca_file, "memory")
    rss = result["rss_mb"]
    total = rss.get("VmRSS", 0) + rss.get("recorder_VmRSS", 0)
    print(
        f"MEM   (e) {args.memory_monitors} monitors, each checked once: RSS engine "
        f"{rss.get('VmRSS')} MB (peak {rss.get('VmHWM')} MB) + recorder process "
        f"{rss.get('recorder_VmRSS', 0)} MB = {total:.1f} MB   (goal < 200 MB)"
    )
    if args.trace_memory:
        env = {**_env(args, workdir, _db_url(args, workdir, "memory"), target.ca_file)}
        env["BENCH_TRACEMALLOC"] = "1"
        url = _db_url(args, workdir, "memory")
        reset(url)
        seed_monitors(
            url,
            target.http_url,
            args.memory_monitors,
            interval=3600,
            first_due=datetime.now(UTC),
            spread=0,
        )
        traced = _engine("burst", args.memory_monitors, args.burst_timeout, env)
        print("          engine's Python heap by line (tracemalloc):")
        for line in traced["top_allocations"]:
            print(f"            {line}")


if __name__ == "__main__":
    main()
