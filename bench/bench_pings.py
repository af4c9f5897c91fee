"""Heartbeat pings: recorded pings/s and p99 latency through the daemon, and the overdue sweep.

Builds an embedded SQLite database with N heartbeat monitors (10,000), each
with its ping token, then starts the daemon as ``make run`` does
(``uptime server run``: waitress, the scheduler, delivery) on a free port and:

1. **Throughput**: ``wrk -t2 -c{--connections}`` for ``--throughput-seconds``,
   its Lua script cycling over the tokens, success pings (closed loop).
   Without wrk (or with ``--no-wrk``), ``--pings`` pings from an aiohttp
   client in a separate process. A ping is answered only once it is written
   (group commit), so pings/s = answered pings / wall time; the check_runs
   count is checked against it afterwards. The daemon's CPU per ping is
   printed (from /proc: the answering process and its recorder children),
   the figure that holds on a shared machine.
2. **Latency**: pings at half that rate, open loop (a ping is sent on
   schedule whether or not earlier ones are answered), for ``--seconds``,
   from a child process over plain asyncio streams (cheaper than aiohttp's
   client, which took a good part of a core from the daemon);
   p50/p99/max of each ping's answer time.
3. **A neighbour** (issue 29): the same latency run again beside a second
   user whose maintenance windows and heartbeat cron the API would refuse,
   written straight into the database (``NEIGHBOURS``: a window every second
   from 1970, one every second since 20 days ago, one that never matches,
   a cron every minute 30 days long, and a cron that never fires), and who
   pings 10 monitors those windows cover (every 20th ping). p99 of the first
   user's pings alone and beside the neighbour, ``--neighbour-rounds`` times
   back to back (the neighbour's rows removed in between, the order swapped
   every other round).
   Then, in this process with the daemon stopped (steadier than a p99 on a
   shared machine): the recorder's time per batch of 5 pings, all the first
   user's, and 4 of theirs with one of the neighbour's.
4. **Sweep**: in this process, the engine's tick over the N monitors: the
   claim query when none is due (every tick), the claim of a batch when all
   are overdue, and SQLite's plan for it (an index search, no scan).

Goals (issue 13): >= 1,500 pings/s recorded, p99 < 50 ms at half rate,
sweep < 20 ms; (issue 29) p99 beside the neighbour within 20 % of p99
alone. Run: ``make bench-pings`` or ``python -m bench.bench_pings``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import peewee

from bench import wrk
from bench.engine_run import cpu_s, tree_cpu_s
from bench.target import daemon_env, free_port, start_daemon, stop_process
from uptime_server import db, migrations
from uptime_server.auth.ping_tokens import new_token, seal, token_hash
from uptime_server.auth.teams import create_personal_team
from uptime_server.models import AlertSettings, MaintenanceWindow, Monitor, MonitorLocation, User

SECRET = "bench-pings-secret"


def seed(url: str, count: int, now: datetime) -> list[str]:
    """*count* heartbeat monitors (hourly, 10 min grace) of one user; their tokens."""
    database = db.bind(url)
    tokens = [new_token() for _ in range(count)]
    with database.connection_context():
        migrations.migrate(database)
        with database.atomic():
            user = User.create(email="bench@example.com", name="bench", created_at=now)
            create_personal_team(user, now=now)
            rows = [
                {
                    "user": user.id,
                    "team": user.personal_team_id,
                    "name": f"job-{i}",
                    "type": "heartbeat",
                    "period": 3600,
                    "grace": 600,
                    "ping_token_hash": token_hash(token),
                    "ping_token_sealed": seal(token, SECRET),
                    "created_at": now,
                    "updated_at": now,
                    "status": "pending",
                }
                for i, token in enumerate(tokens)
            ]
            for chunk in peewee.chunked(rows, 500):
                Monitor.insert_many(chunk).execute()
            ids = [m.id for m in Monitor.select(Monitor.id).order_by(Monitor.id)]
            due = now + timedelta(seconds=4200)
            for chunk in peewee.chunked(ids, 500):
                AlertSettings.insert_many([{"monitor": i} for i in chunk]).execute()
                MonitorLocation.insert_many(
                    [{"monitor": i, "location": "local", "next_check_at": due} for i in chunk]
                ).execute()
    database.close()
    return tokens


# -- the load generator (a child process) ------------------------------------------


async def _closed_loop(base: str, tokens: list[str], total: int, connections: int) -> Any:
    import aiohttp

    counter = iter(range(total))
    statuses: dict[int, int] = {}

    async def worker(session: aiohttp.ClientSession) -> None:
        for i in counter:
            async with session.get(f"{base}/ping/{tokens[i % len(tokens)]}") as response:
                await response.read()
                statuses[response.status] = statuses.get(response.status, 0) + 1

    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.perf_counter()
        await asyncio.gather(*(worker(session) for _ in range(connections)))
        return time.perf_counter() - started, statuses


async def _open_loop(
    base: str,
    tokens: list[str],
    rate: float,
    seconds: float,
    others: list[str] | None = None,
    every: int = 0,
) -> Any:
    """Pings on a fixed schedule over plain asyncio streams (keep-alive, at most 64).

    With *others*, every *every*-th ping is one of theirs, timed apart: the
    answer is (latencies, statuses) of *tokens*' pings, then of *others*'.

    aiohttp's client cost ~0.4 ms of CPU per request here: at a few hundred
    pings/s it took a good part of a core from the daemon it measured. A
    request written by hand and its answer read by its Content-Length cost a
    fraction of that.
    """
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    their_latencies: list[float] = []
    their_statuses: dict[int, int] = {}
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    # Below waitress's connection_limit (100): more connections would wait to be accepted.
    slots = asyncio.Semaphore(64)
    request = (
        "POST /ping/{} HTTP/1.1\r\nHost: {}\r\nContent-Type: text/plain\r\n"
        "Content-Length: 11\r\n\r\nbackup done"
    )

    async def one(token: str, latencies: list[float], statuses: dict[int, int]) -> None:
        started = time.perf_counter()
        async with slots:
            conn = idle.pop() if idle else await asyncio.open_connection(host, int(port))
            reader, writer = conn
            writer.write(request.format(token, host).encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            latencies.append(time.perf_counter() - started)
            status = int(head[9:12])
            statuses[status] = statuses.get(status, 0) + 1
            idle.append(conn)

    tasks = []
    start = time.perf_counter()
    for i in range(int(rate * seconds)):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if others and every and i % every == every - 1:
            theirs = one(others[(i // every) % len(others)], their_latencies, their_statuses)
            tasks.append(asyncio.create_task(theirs))
        else:
            mine = one(tokens[(i * 7919) % len(tokens)], latencies, statuses)
            tasks.append(asyncio.create_task(mine))
    await asyncio.gather(*tasks)
    for _reader, writer in idle:
        writer.close()
    if others:
        return latencies, statuses, their_latencies, their_statuses
    return latencies, statuses


# wrk's Lua: each connection's next request pings the next token of the list
# (each wrk thread starts at its own offset), so pings spread over the monitors.
def wrk_closed_loop(
    base: str, tokens: list[str], seconds: float, connections: int
) -> tuple[float, dict[int, int]]:
    """Success pings from ``wrk`` for *seconds*: wall time and statuses (200 vs. others)."""
    got = wrk.run(
        base, connections=connections, seconds=seconds, paths=[f"/ping/{t}" for t in tokens]
    )
    statuses = {200: got.requests - got.non_2xx}
    if got.non_2xx:
        statuses[0] = got.non_2xx  # non-2xx: which ones wrk does not say
    if got.socket_errors:
        print(f"  wrk: {got.detail}")
    return got.wall_s, statuses


def _load(kind: str, args: tuple[Any, ...], queue: Any) -> None:
    runner = _closed_loop if kind == "closed" else _open_loop
    queue.put(asyncio.run(runner(*args)))


def in_child(kind: str, *args: Any) -> Any:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_load, args=(kind, args, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


# -- the neighbour (issue 29) ---------------------------------------------------------

# Schedules the API refuses, each of which took seconds per evaluation (some for ever)
# inside the recorder's write transaction before issue 29.
NEIGHBOURS = {
    "issue": [
        {"rrule": "DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY", "duration": 60},
        {"rrule": "FREQ=SECONDLY", "duration": 60},  # from its creation, 20 days back
        {"rrule": "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30", "duration": 3600},
        {"cron": "* * * * *", "duration": 30 * 86400},
    ],
    # What code before issue 29 gets through at all (a window from 1970 stalls it an hour).
    "mild": [
        {"rrule": "FREQ=SECONDLY", "duration": 60},
        {"cron": "* * * * *", "duration": 30 * 86400},
    ],
}
NEIGHBOUR_MONITORS = 10


def add_neighbour(url: str, now: datetime, kind: str) -> list[str]:
    """A second user with NEIGHBOURS[kind] windows over 10 heartbeats (one with a cron
    that never fires), written straight into the database; their tokens."""
    database = db.bind(url)
    tokens = [new_token() for _ in range(NEIGHBOUR_MONITORS)]
    made = now - timedelta(days=20)
    with database.connection_context(), database.atomic():
        user = User.get_or_none(User.email == "neighbour@example.com")
        if user is None:
            user = User.create(email="neighbour@example.com", name="neighbour", created_at=made)
            create_personal_team(user, now=made)
        ids = []
        for i, token in enumerate(tokens):
            schedule = {"cron": "0 0 30 2 *", "timezone": "UTC"} if i == 0 else {"period": 3600}
            monitor = Monitor.create(
                user=user.id,
                team=user.personal_team_id,
                name=f"neighbour-{i}",
                type="heartbeat",
                grace=600,
                ping_token_hash=token_hash(token),
                ping_token_sealed=seal(token, SECRET),
                created_at=made,
                updated_at=made,
                status="pending",
                **schedule,
            )
            AlertSettings.create(monitor=monitor.id)
            MonitorLocation.create(
                monitor=monitor.id, location="local", next_check_at=now + timedelta(hours=2)
            )
            ids.append(monitor.id)
        for schedule in NEIGHBOURS[kind]:
            MaintenanceWindow.create(
                user=user.id,
                team=user.personal_team_id,
                title="pathological",
                monitor_ids=ids,
                created_at=made,
                updated_at=made,
                **schedule,
            )
    database.close()
    return tokens


def remove_neighbour(url: str) -> None:
    database = db.bind(url)
    with database.connection_context(), database.atomic():
        user = User.get(User.email == "neighbour@example.com")
        MaintenanceWindow.delete().where(MaintenanceWindow.user == user.id).execute()
        for monitor in Monitor.select().where(Monitor.user == user.id):
            monitor.delete_instance(recursive=True)
    database.close()


def batch_costs(url: str, tokens: list[str], kind: str, batches: int = 400) -> tuple[float, float]:
    """Median ms per batch of 5 pings through the recorder, alone and with a neighbour's ping."""
    from uptime_server.config import load_settings
    from uptime_server.engine.recorder import Recorder
    from uptime_server.heartbeats.batch import PingIn, record_pings

    theirs = add_neighbour(url, datetime.now(UTC), kind)
    database = db.bind(url)
    recorder = Recorder(load_settings({"UPTIME_DATABASE_URL": url, "UPTIME_SECRET_KEY": SECRET}))

    def pings(chosen: list[str]) -> list[PingIn]:
        at = datetime.now(UTC)
        return [PingIn(token_hash(t), "success", None, b"", None, None, at) for t in chosen]

    medians = []
    with database.connection_context():
        for neighbour in (False, True):
            samples = []
            for i in range(batches):
                mine = [tokens[(i * 5 + j) * 7919 % len(tokens)] for j in range(5)]
                if neighbour:
                    mine[-1] = theirs[i % len(theirs)]
                batch = pings(mine)
                started = time.perf_counter()
                record_pings(recorder, batch, now=datetime.now(UTC))
                samples.append(time.perf_counter() - started)
            medians.append(statistics.median(samples) * 1000)
    database.close()
    remove_neighbour(url)
    return medians[0], medians[1]


def p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[int(0.99 * (len(ordered) - 1))] * 1000 if ordered else float("nan")


# -- the daemon ----------------------------------------------------------------------


def start_pinged_daemon(
    data_dir: Path, url: str, port: int, http_threads: int | None = None
) -> subprocess.Popen[bytes]:
    settings = {"UPTIME_DATABASE_URL": url, "UPTIME_SECRET_KEY": SECRET}
    if http_threads is not None:
        settings["UPTIME_HTTP_THREADS"] = str(http_threads)
    return start_daemon(daemon_env(data_dir, port, **settings))


def daemon_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of the daemon itself and of its children (the database workers)."""
    own = cpu_s(f"/proc/{pid}/stat")
    return own, tree_cpu_s(pid) - own


def recorded(url: str) -> int:
    database = db.bind(url)
    with database.connection_context():
        return database.execute_sql("SELECT COUNT(*) FROM check_runs").fetchone()[0]


# -- the sweep -----------------------------------------------------------------------


def sweep(url: str, count: int, now: datetime, repeats: int = 50) -> dict[str, float]:
    from uptime_server.config import load_settings
    from uptime_server.engine.dispatcher import Dispatcher, oldest_due

    database = db.bind(url)
    settings = load_settings({"UPTIME_DATABASE_URL": url, "UPTIME_SECRET_KEY": SECRET})
    dispatcher = Dispatcher(settings)
    out: dict[str, float] = {}
    with database.connection_context():
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            assert dispatcher.claim(now) == []
            with database.connection_context():
                oldest_due(now, "local")
            samples.append(time.perf_counter() - started)
        out["tick, none due (claim + next due)"] = statistics.median(samples) * 1000
        # The median of a few claims of 500 (each released for the next): a
        # single one is mostly the first run of its statement.
        later = now + timedelta(days=1)
        samples, claimed = [], 0
        for _ in range(7):
            started = time.perf_counter()
            claims = dispatcher.claim(later)
            samples.append(time.perf_counter() - started)
            claimed = len(claims)
            dispatcher.release(claims)
        out[f"claim of {claimed} overdue of {count} (median of 7)"] = (
            statistics.median(samples) * 1000
        )
        plan = database.execute_sql(
            "EXPLAIN QUERY PLAN SELECT id FROM monitor_locations "
            "WHERE location = 'local' AND next_check_at <= ? ORDER BY next_check_at LIMIT 500",
            (now.replace(tzinfo=None),),
        ).fetchall()
    print("  claim query plan: " + "; ".join(str(row[-1]) for row in plan))
    return out


def neighbour_phase(url: str, base: str, tokens: list[str], rate: float, args: Any) -> None:
    """p99 of the first user's pings alone and beside the neighbour, back to back, the
    order swapped every other round (the second run of a pair tends to differ)."""
    alone, beside = [], []
    for round_ in range(args.neighbour_rounds):
        for neighbour in (False, True) if round_ % 2 == 0 else (True, False):
            if not neighbour:
                latencies, _statuses = in_child("open", base, tokens, rate, args.seconds)
                alone.append(p99(latencies))
                continue
            theirs = add_neighbour(url, datetime.now(UTC), args.neighbour)
            mine, statuses, their_latencies, their_statuses = in_child(
                "open", base, tokens, rate, args.seconds, theirs, 20
            )
            remove_neighbour(url)
            beside.append(p99(mine))
            print(
                f"neighbour ({args.neighbour}: {len(NEIGHBOURS[args.neighbour])} windows, a "
                f"cron that never fires, every 20th ping): the first user's p99 "
                f"{beside[-1]:.1f} ms (statuses {statuses}); the neighbour's own "
                f"{p99(their_latencies):.1f} ms (statuses {their_statuses})"
            )
        print(
            f"  round {round_ + 1}: p99 {alone[-1]:.1f} ms alone, {beside[-1]:.1f} ms beside it "
            f"({'alone first' if round_ % 2 == 0 else 'beside first'})"
        )
    a, b = statistics.median(alone), statistics.median(beside)
    print(
        f"neighbour: median over {args.neighbour_rounds} rounds, p99 {a:.1f} ms alone, "
        f"{b:.1f} ms beside it ({(b / a - 1) * 100:+.0f} %)  goal within 20 %"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=10_000)
    parser.add_argument(
        "--pings", type=int, default=20_000, help="pings of the throughput phase without wrk"
    )
    parser.add_argument(
        "--throughput-seconds", type=float, default=10.0, help="the throughput phase with wrk"
    )
    parser.add_argument("--no-wrk", action="store_true", help="aiohttp for the throughput phase")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument(
        "--neighbour",
        choices=sorted(NEIGHBOURS),
        default="issue",
        help="the neighbour's windows ('mild': what code before issue 29 gets through)",
    )
    parser.add_argument("--neighbour-rounds", type=int, default=4)
    parser.add_argument(
        "--http-threads",
        type=int,
        default=None,
        help="UPTIME_HTTP_THREADS of the daemon (default: its own, as make run starts it)",
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-pings-") as tmp:
        data_dir = Path(tmp)
        url = f"sqlite:///{data_dir / 'uptime.db'}"
        now = datetime.now(UTC)
        tokens = seed(url, args.monitors, now)
        threads = f", UPTIME_HTTP_THREADS={args.http_threads}" if args.http_threads else ""
        print(
            f"{args.monitors} heartbeat monitors on embedded SQLite; "
            f"daemon: uptime server run{threads}"
        )
        port = free_port()
        daemon = start_pinged_daemon(data_dir, url, port, args.http_threads)
        base = f"http://127.0.0.1:{port}"
        try:
            in_child("closed", base, tokens, 500, 8)  # warm-up
            before, cpu_before = recorded(url), daemon_cpu(daemon.pid)
            use_wrk = shutil.which("wrk") is not None and not args.no_wrk
            load_before = os.getloadavg()[0]
            if use_wrk:
                generator = f"wrk -t2 -c{args.connections}, {args.throughput_seconds:g} s"
                wall, statuses = wrk_closed_loop(
                    base, tokens, args.throughput_seconds, args.connections
                )
            else:
                generator = f"aiohttp, {args.connections} connections (no wrk: apt-get install wrk)"
                wall, statuses = in_child("closed", base, tokens, args.pings, args.connections)
            # No wait: a ping is answered once committed, so every answer is there now.
            stored = recorded(url) - before
            own, children = (
                after - at_start
                for after, at_start in zip(daemon_cpu(daemon.pid), cpu_before, strict=True)
            )
            cpu = own + children
            rate = statuses.get(200, 0) / wall
            print(
                f"throughput: {statuses.get(200, 0)} pings answered 200 in {wall:.2f} s "
                f"({generator}) = {rate:,.0f} pings/s "
                f"(check_runs +{stored}; statuses {statuses})  goal >= 1,500"
            )
            print(
                f"  daemon CPU: {cpu:.1f} s = {statuses.get(200, 0) / cpu:,.0f} pings per "
                f"CPU-second; load average {load_before:.1f} before, "
                f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores"
            )
            answered = max(statuses.get(200, 0), 1)
            print(
                f"  CPU per ping: {own / answered * 1000:.2f} ms answering (waitress, ping path), "
                f"{children / answered * 1000:.2f} ms recording (database worker)"
            )
            half = rate / 2
            latencies, statuses = in_child("open", base, tokens, half, args.seconds)
            latencies.sort()
            p = [latencies[int(q * (len(latencies) - 1))] * 1000 for q in (0.5, 0.99)]
            print(
                f"latency at {half:,.0f} pings/s for {args.seconds:.0f} s ({len(latencies)} pings, "
                f"statuses {statuses}): p50 {p[0]:.1f} ms, p99 {p[1]:.1f} ms, "
                f"max {latencies[-1] * 1000:.1f} ms  goal p99 < 50 ms"
            )
            neighbour_phase(url, base, tokens, half, args)
        finally:
            stop_process(daemon)
        alone, beside = batch_costs(url, tokens, args.neighbour)
        change = (beside / alone - 1) * 100
        print(
            f"neighbour, in-process: the recorder's median per batch of 5 pings {alone:.2f} ms "
            f"alone, {beside:.2f} ms with one of the neighbour's ({change:+.0f} %)"
        )
        for label, ms in sweep(url, args.monitors, now).items():
            print(f"sweep: {label}: {ms:.2f} ms  goal < 20 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
