"""The engine's database work per check, in-process: ``python -m bench.engine_costs``.

Seeds ``--monitors`` monitors all due in a scratch SQLite file (or, with
``--postgres``, a scratch PostgreSQL database on 127.0.0.1), then claims
them in batches of ``--batch`` (``Dispatcher.claim``) and records a passing
run for each claim (``Recorder.record``, the transaction the database worker
runs), and prints the CPU time of this process per check for each: no probe,
no target, no other process, so the figure moves with the code, little with
the machine's load. ``--profile`` prints the top of a cProfile of each part.
On PostgreSQL the server's CPU per check (all its processes, from ``/proc``)
is printed beside each part: the database's share of the history.
``--again`` measures a second pass over the same monitors, in the same
five-minute bucket: their roll-up rows exist, as they do for a monitor checked
every minute (the first pass writes them, unmeasured).

Then the same claims made as the daemon makes them, by the database worker
(``DatabaseWorker.claim`` of each ``Dispatcher.next_request``): the CPU this
process still spends per check (the request, the unpickled claims), the
query's being the child's. Last, the hand-over of a batch of ``--batch``
outcomes to the worker: the CPU per outcome to pickle it as the writer sends
it (``CheckOutcome.__reduce__``) and to unpickle it as the child reads it.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.pg_cpu import postgres_cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monitors", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3, help="best of N")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--again",
        action="store_true",
        help="measure a second pass, each monitor's roll-up rows there already",
    )
    parser.add_argument(
        "--postgres", action="store_true", help="a scratch PostgreSQL database on 127.0.0.1"
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        workdir = Path(tempfile.mkdtemp(prefix="uptime-costs-"))
        url = f"sqlite:///{workdir / 'costs.db'}"
        if args.postgres:
            from tests.pg import scratch_database

            url = stack.enter_context(scratch_database("uptime_bench_costs", timeout=3))
        os.environ.update(
            UPTIME_DATABASE_URL=url,
            UPTIME_DATA_DIR=str(workdir / "data"),
            UPTIME_SECRET_KEY="bench",
        )
        _report(args)


def _report(args: argparse.Namespace) -> None:
    rounds = [_round(args) for _ in range(args.rounds)]
    claim, record = min(r[0] for r in rounds), min(r[1] for r in rounds)
    line = (
        f"{args.monitors} checks{' (a second pass)' if args.again else ''} "
        f"in batches of {args.batch}, best of {args.rounds}: "
        f"claim {claim * 1e6:.0f} µs CPU per check, record {record * 1e6:.0f} µs"
    )
    if args.postgres:
        pg_claim, pg_record = min(r[2] for r in rounds), min(r[3] for r in rounds)
        line += (
            f"; PostgreSQL's CPU per check: claim {pg_claim * 1e6:.0f} µs, "
            f"record {pg_record * 1e6:.0f} µs"
        )
    print(line)
    remote = min(_child_claim_round(args) for _ in range(args.rounds))
    print(
        f"claims made by the database worker: {remote * 1e6:.0f} µs CPU per check "
        "in the claiming process"
    )
    send, read = _handover(args.batch)
    print(
        f"outcomes handed to the database worker: {send * 1e6:.2f} µs CPU per outcome "
        f"to send, {read * 1e6:.2f} µs to read"
    )


def _round(args: argparse.Namespace) -> tuple[float, float, float, float]:
    """CPU per check of the claims and the records: this process's, PostgreSQL's."""
    from bench.seed import reset, seed_monitors
    from uptime_server.config import load_settings
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database
    from uptime_server.engine.dispatcher import Dispatcher
    from uptime_server.engine.recorder import Recorder
    from uptime_server.models import MonitorLocation

    url = os.environ["UPTIME_DATABASE_URL"]
    reset(url)
    seed_monitors(url, "http://127.0.0.1:9/", args.monitors, interval=3600,
                  first_due=datetime.now(UTC), spread=0)  # fmt: skip
    settings = prepare(load_settings())
    dispatcher, recorder = Dispatcher(settings), Recorder(settings)
    profiles = (cProfile.Profile(), cProfile.Profile()) if args.profile else None
    pg_cpu = postgres_cpu_s if args.postgres else (lambda: 0.0)
    claim_s = record_s = pg_claim_s = pg_record_s = 0.0
    done = 0
    with database.connection_context():
        if args.again:  # the first pass writes the roll-up rows, the second is measured
            _record_all(dispatcher, recorder, args.batch)
            MonitorLocation.update(next_check_at=datetime.now(UTC)).execute()
        while True:
            # PostgreSQL's CPU read outside this process's window: a read walks /proc.
            pg, started = pg_cpu(), time.process_time()
            if profiles:
                profiles[0].enable()
            claims = dispatcher.claim(datetime.now(UTC), args.batch)
            if profiles:
                profiles[0].disable()
            claim_s += time.process_time() - started
            pg_claim_s += pg_cpu() - pg
            if not claims:
                break
            done += len(claims)
            at = datetime.now(UTC)
            outcomes = _passed(claims, at)
            pg, started = pg_cpu(), time.process_time()
            if profiles:
                profiles[1].enable()
            recorder.record(outcomes, now=at)
            if profiles:
                profiles[1].disable()
            record_s += time.process_time() - started
            pg_record_s += pg_cpu() - pg
    if profiles:
        for name, profile in zip(("claim", "record"), profiles, strict=True):
            print(f"== {name}")
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    done = max(done, 1)
    return claim_s / done, record_s / done, pg_claim_s / done, pg_record_s / done


def _passed(claims: list[Any], at: datetime) -> list[Any]:
    from uptime_server.checks.outcomes import CheckOutcome
    from uptime_server.engine.dispatcher import next_due

    return [
        CheckOutcome(
            monitor_id=c.monitor_id,
            monitor_created_at=c.monitor_created_at,
            location=c.location,
            checked_at=at,
            passed=True,
            response_time=3,
            status_code=200,
            error=None,
            next_check_at=next_due(c, at),
            lease_owner=c.lease_owner,
        )
        for c in claims
    ]


def _record_all(dispatcher: Any, recorder: Any, batch: int) -> None:
    """Claim every due check and record it as passed (an unmeasured pass)."""
    while claims := dispatcher.claim(datetime.now(UTC), batch):
        at = datetime.now(UTC)
        recorder.record(_passed(claims, at), now=at)


def _child_claim_round(args: argparse.Namespace) -> float:
    from bench.seed import reset, seed_monitors
    from uptime_server.config import load_settings
    from uptime_server.daemon.process import prepare
    from uptime_server.engine.dispatcher import Dispatcher
    from uptime_server.engine.worker import DatabaseWorker

    url = os.environ["UPTIME_DATABASE_URL"]
    reset(url)
    seed_monitors(url, "http://127.0.0.1:9/", args.monitors, interval=3600,
                  first_due=datetime.now(UTC), spread=0)  # fmt: skip
    settings = prepare(load_settings())
    child = DatabaseWorker(settings)
    try:
        child.record([], datetime.now(UTC))  # answered once the child is up
        dispatcher = Dispatcher(settings)
        done, started = 0, time.process_time()
        while request := dispatcher.next_request(datetime.now(UTC), args.batch):
            claims = child.claim(request)
            if not claims:
                break
            done += len(claims)
        return (time.process_time() - started) / max(done, 1)
    finally:
        child.close()


def _handover(batch: int, repeat: int = 200) -> tuple[float, float]:
    """Best of 7: seconds per outcome to pickle a batch as ``DatabaseWorker.record`` sends it
    (through multiprocessing's pickler) and to unpickle it as the child reads it."""
    import pickle
    from datetime import timedelta
    from multiprocessing.reduction import ForkingPickler

    from uptime_server.checks.outcomes import CheckOutcome
    from uptime_server.engine.worker import _Record

    at = datetime.now(UTC)
    outcomes = [
        CheckOutcome(
            monitor_id=i,
            monitor_created_at=at - timedelta(days=1, seconds=i),
            location="local",
            checked_at=at + timedelta(microseconds=i),
            passed=True,
            response_time=3,
            status_code=200,
            error=None,
            next_check_at=at + timedelta(seconds=60, microseconds=i),
            lease_owner="host-1-ab12cd34/7",
        )
        for i in range(batch)
    ]
    request = _Record(outcomes, at, False)
    sent = bytes(ForkingPickler.dumps(request))
    assert pickle.loads(sent) == request
    send = read = float("inf")
    for _ in range(7):
        started = time.process_time()
        for _ in range(repeat):
            ForkingPickler.dumps(request)
        send = min(send, (time.process_time() - started) / repeat / batch)
        started = time.process_time()
        for _ in range(repeat):
            pickle.loads(sent)
        read = min(read, (time.process_time() - started) / repeat / batch)
    return send, read


if __name__ == "__main__":
    main()
