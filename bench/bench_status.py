"""Status page and badge speed, served the way ``make run`` serves (waitress).

Builds a SQLite database with one user, 100 monitors (badges on) and 90 days
of roll-ups each (daily rows for 90 days, hourly for the last 48 hours,
5-minute ones for the last 2 hours, as the writer leaves them), and 100
status pages of all 100 monitors in 4 groups, made through the API. Then it
starts ``uptime server run --no-scheduler`` as its own process on 127.0.0.1
and, from this process:

- cold render: the first request of each of 100 pages (nothing cached yet),
  over HTTP, p50/p95 ms; and the render alone (``page_content.build`` and
  the template, no HTTP) in this process, p50/p95 ms;
- cached page: requests/s on one page within its cache TTL, asking for
  gzip as browsers do (the page is ~450 KB of HTML, ~30 KB gzipped);
- badge: requests/s on one monitor's status badge.

Both cached figures are answered by the WSGI fast path in front of Flask
(``fast_paths/public_pages.py``). Beside each rate it prints the daemon's CPU per
request (utime + stime of the daemon process and its children, from /proc,
over the load phase: steadier than req/s on a shared machine), and, in this
process with no HTTP, the CPU per cached request through the fast path and
through Flask alone. It ends with the three figures beside their goals.

Load comes from ``wrk`` (Debian package) when installed, else from a Python
load generator (threads over keep-alive ``http.client`` connections), and
the tool used is printed. Rate limiting is off. Goals (issue 16): cold p95
< 50 ms, cached page >= 1,000 req/s, badge >= 2,000 req/s.

Run: ``make bench-status`` or ``python -m bench.bench_status [--seconds N]``.
"""

from __future__ import annotations

import argparse
import http.client
import math
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests
from werkzeug.test import EnvironBuilder

from bench import wrk
from bench.bench_stats import insert_rows, signed_in
from bench.engine_run import tree_cpu_s
from bench.target import daemon_env, free_port, start_daemon, stop_process
from uptime_server import db
from uptime_server.auth.badge_tokens import new_token
from uptime_server.models import Monitor, StatusPage
from uptime_server.stats.rollups import DAY, FIVE_MIN, HOUR
from uptime_server.web import page_content
from uptime_server.web.rendering import status_page_html
from uptime_server.wsgi.context import app_state

MONITORS = 100
GZIP = "Accept-Encoding: gzip"  # as every browser sends
PAGES = 100
ROLLUP_COLUMNS = (
    "monitor_id", "resolution", "bucket", "checks", "failed",
    "rt_count", "rt_sum", "rt_min", "rt_max", "p95", "hist",
)  # fmt: skip


def build(path: Path, now: datetime) -> tuple[dict[str, str], str, Any]:
    """The database at *path*; returns the daemon's environment, one badge token and
    the app (in this process) that made it."""
    settings, client, user = signed_in(path)
    with db.database.connection_context():
        rows = [
            {
                "user": user.id,
                "team": user.personal_team_id,
                "name": f"service-{i:03d}",
                "url": f"https://svc{i}.example.com/health",
                "type": "https",
                "status": "online" if i % 25 else "offline",
                "badges": True,
                "badge_token": new_token(),
                "created_at": now,
                "updated_at": now,
            }
            for i in range(MONITORS)
        ]
        Monitor.insert_many(rows).execute()
        ids = [m.id for m in Monitor.select(Monitor.id).order_by(Monitor.id)]
        token = Monitor.get_by_id(ids[0]).badge_token
        with db.database.atomic():
            insert_rows("rollups", ROLLUP_COLUMNS, list(_rollups(ids, int(now.timestamp()))))
    groups = [
        {"heading": f"Group {g}", "monitor_ids": ids[g * 25 : (g + 1) * 25]} for g in range(4)
    ]
    for n in range(PAGES):
        body = {"slug": f"page-{n:03d}", "title": f"Bench {n}", "groups": groups}
        response = client.post("/api/v1/status-pages", json=body)
        assert response.status_code == 201, response.get_json()
    env = {
        "UPTIME_DATA_DIR": str(settings.data_dir),
        "UPTIME_DATABASE_URL": settings.database_url,
        "UPTIME_SECRET_KEY": "bench",
        "UPTIME_RATE_LIMIT": "off",
    }
    return env, token, client.application


def _rollups(ids: list[int], now: int):
    hist = "[233,288]"  # one bucket of ~100 ms
    spans = ((DAY, 90 * DAY, 288), (HOUR, 48 * HOUR, 12), (FIVE_MIN, 2 * HOUR, 1))
    for mid in ids:
        for res, span, checks in spans:
            last = now // res * res
            for bucket in range(last - span + res, last + res, res):
                failed = checks // 10 if (bucket // res + mid) % 37 == 0 else 0
                ok = checks - failed
                yield (mid, res, bucket, checks, failed, ok, ok * 100, 90, 110, 100, hist)


def percentile(samples: list[float], q: float) -> float:
    return sorted(samples)[math.ceil(q * len(samples)) - 1]


def percentiles(samples: list[float]) -> str:
    p95 = percentile(samples, 0.95)
    return f"p50 {statistics.median(samples):.1f} ms, p95 {p95:.1f} ms"


def goal(name: str, figure: str, target: str, met: bool) -> str:
    return f"  {name:<14} {figure:>12}  goal {target:<15} {'met' if met else 'NOT MET'}"


def cold_http(base: str) -> list[float]:
    times = []
    with requests.Session() as http:
        for n in range(1, PAGES):  # page-000 is the warm one
            t0 = time.perf_counter()
            response = http.get(f"{base}/status/page-{n:03d}", timeout=30)
            times.append((time.perf_counter() - t0) * 1000)
            response.raise_for_status()
    return times


def render_only(count: int = 50) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of build + template; CPU time is steadier on a shared machine."""
    wall, cpu = [], []
    with db.database.connection_context():
        page = StatusPage.get(StatusPage.slug == "page-000")
        for _ in range(count):
            w0, c0 = time.perf_counter(), time.process_time()
            status_page_html(page_content.build(page, datetime.now(UTC)))
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
    return wall, cpu


@dataclass
class Load:
    rate: float  # requests/s
    requests: int
    tool: str
    cpu_ms: float  # CPU of the daemon (and its children) per request


def load(url: str, seconds: float, connections: int, daemon_pid: int) -> Load:
    """Requests/s on *url* (all answers 200) and the daemon's CPU per request."""
    cpu0 = tree_cpu_s(daemon_pid)
    if shutil.which("wrk"):
        got = wrk.run(url, connections=connections, seconds=seconds, headers=[GZIP])
        if got.non_2xx:
            raise RuntimeError(f"wrk saw errors: {got.detail}")
        rate, count, tool = got.rps, got.requests, "wrk"
    else:
        rate, count = _python_load(url, seconds, connections)
        tool = "python threads (http.client)"
    cpu_ms = (tree_cpu_s(daemon_pid) - cpu0) * 1000 / max(count, 1)
    return Load(rate, count, tool, cpu_ms)


def _python_load(url: str, seconds: float, connections: int) -> tuple[float, int]:
    host, port_path = url.removeprefix("http://").split(":", 1)
    port, path = port_path.split("/", 1)
    counts = [0] * connections
    stop = time.monotonic() + seconds

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        while time.monotonic() < stop:
            conn.request("GET", "/" + path, headers={"Accept-Encoding": "gzip"})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"{url}: {response.status}")
            counts[i] += 1
        conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - t0), sum(counts)


def in_process_us(app: Any, path: str, count: int = 5000) -> tuple[float, float]:
    """CPU µs per cached request of *path* (asking for gzip) in this process, straight into
    the WSGI app: through the fast path in front of Flask, and through Flask alone."""
    environ = EnvironBuilder(path=path, headers={"Accept-Encoding": "gzip"}).get_environ()

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        if not status.startswith("200"):
            raise RuntimeError(f"{path}: {status}")

    out = []
    for wsgi in (app.wsgi_app, app_state(app).fast_paths.app):
        b"".join(wsgi(dict(environ), start_response))  # cached from here on
        c0 = time.process_time()
        for _ in range(count):
            b"".join(wsgi(dict(environ), start_response))
        out.append((time.process_time() - c0) * 1e6 / count)
    return out[0], out[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="Per load phase.")
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        t0 = time.perf_counter()
        env, token, app = build(Path(tmp) / "status.db", datetime.now(UTC))
        print(f"built {MONITORS} monitors x 90 days of roll-ups, {PAGES} pages "
              f"in {time.perf_counter() - t0:.1f} s (SQLite)")  # fmt: skip
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        port = free_port()
        # No scheduler: the seeded monitors' URLs are not to be dialled.
        daemon = start_daemon(daemon_env(Path(tmp), port, **env), "--no-scheduler")
        base = f"http://127.0.0.1:{port}"
        try:
            cold = cold_http(base)
            cold_p95 = percentile(cold, 0.95)
            print(f"cold page over HTTP ({PAGES - 1} pages, first hit each): {percentiles(cold)}"
                  "  (goal p95 < 50 ms)")  # fmt: skip
            wall, cpu = render_only()
            print(f"render alone, in process (build + template): {percentiles(wall)}; "
                  f"CPU {percentiles(cpu)}")  # fmt: skip
            page = f"{base}/status/page-000"
            requests.get(page, timeout=30).raise_for_status()
            cached = load(page, args.seconds, args.connections, daemon.pid)
            print(f"cached page: {cached.rate:,.0f} req/s, daemon CPU {cached.cpu_ms:.3f} "
                  f"ms/request  (goal >= 1,000 req/s; {cached.tool}, "
                  f"{args.connections} connections, {args.seconds:g} s)")  # fmt: skip
            badge_path = f"/badge/{token}/status.svg"
            badge = base + badge_path
            requests.get(badge, timeout=30).raise_for_status()
            badged = load(badge, args.seconds, args.connections, daemon.pid)
            print(f"status badge: {badged.rate:,.0f} req/s, daemon CPU {badged.cpu_ms:.3f} "
                  f"ms/request  (goal >= 2,000 req/s; {badged.tool})")  # fmt: skip
            print(f"load average after: {os.getloadavg()[0]:.1f}")
            for name, path in (("cached page", "/status/page-000"), ("status badge", badge_path)):
                fast, flask = in_process_us(app, path)
                print(f"{name}, in process (no HTTP): CPU {fast:.0f} µs/request through the "
                      f"fast path, {flask:.0f} µs through Flask")  # fmt: skip
            print("goals (issue 16):")
            for line in (
                goal("cold page p95", f"{cold_p95:.1f} ms", "< 50 ms", cold_p95 < 50),
                goal("cached page", f"{cached.rate:,.0f} req/s", ">= 1,000 req/s",
                     cached.rate >= 1000),
                goal("status badge", f"{badged.rate:,.0f} req/s", ">= 2,000 req/s",
                     badged.rate >= 2000),
            ):  # fmt: skip
                print(line)
        finally:
            stop_process(daemon)
    return 0


if __name__ == "__main__":
    sys.exit(main())
