"""The engine under test, in its own process: ``python -m bench.engine_run MODE N SECONDS``.

Runs the real scheduler component (LoopRunner, real clock) against the
database and CA of the environment (UPTIME_*), then prints one JSON line:

- ``burst``: until N checks are completed and recorded (or SECONDS pass):
  the time to the last completed and the last recorded check;
- ``steady``: for SECONDS: dispatch lags (start − due) and the process's RSS.

``BENCH_SHARED=1`` (several engine processes on one database, ``bench_scale``):
a burst also ends once nothing more was recorded for ``IDLE_STOP`` seconds
and nothing is left to claim (the other processes hold or did the rest),
and ``last_recorded_s`` says when this process recorded its last check.
``BENCH_TRACEMALLOC=1`` adds ``top_allocations``: the Python heap by line.

``BENCH_EXCLUDE_MONITORS`` (comma list of monitor ids) leaves those monitors'
runs out of the lag figures (a monitor under test, not one of "the others").
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
import tracemalloc
from datetime import UTC, datetime

from uptime_server import gc_policy
from uptime_server.clock import Clock
from uptime_server.config import load_settings
from uptime_server.daemon.loops import LoopRunner
from uptime_server.daemon.process import prepare
from uptime_server.engine.probe_loop import ProbeJob
from uptime_server.engine.scheduler import CheckScheduler
from uptime_server.engine.worker import DatabaseWorker, InProcess

IDLE_STOP = 1.0  # seconds without a recorded check before a shared burst looks if it is over


def _rss_mb(pid: int) -> dict[str, float]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def cpu_s(stat_path: str) -> float:
    """utime + stime of a process or thread, from its /proc stat file."""
    with open(stat_path) as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """utime + stime of *pid* and its live descendants, in seconds (from /proc)."""
    total, todo = 0.0, [pid]
    while todo:
        pid = todo.pop()
        try:
            total += cpu_s(f"/proc/{pid}/stat")
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as children:
                    todo.extend(int(c) for c in children.read().split())
        except (OSError, ValueError):
            continue  # gone meanwhile
    return total


def _threads_cpu() -> dict[str, float]:
    """CPU seconds per live thread of this process, by thread name."""
    out: dict[str, float] = {}
    for thread in threading.enumerate():
        try:
            out[thread.name] = cpu_s(f"/proc/self/task/{thread.native_id}/stat")
        except (OSError, TypeError):
            continue
    return out


def _nothing_left(scheduler: CheckScheduler) -> bool:
    """Nothing running or unwritten here, and no claimable check due in the database."""
    if scheduler.probes.pending or scheduler.writer.backlog:
        return False
    now = datetime.now(UTC)
    oldest = scheduler.dispatcher.oldest_due(now)
    return oldest is None or oldest > now


def _top_allocations(limit: int = 8) -> list[str]:
    """Where the engine process's Python heap is, by file and line (tracemalloc)."""
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")]
    )
    stats = snapshot.statistics("lineno")
    total = sum(stat.size for stat in stats)
    return [f"total {total / 2**20:.1f} MB"] + [
        f"{stat.size / 2**20:.1f} MB {stat.traceback[0].filename.rsplit('/', 2)[-2:]}"
        f":{stat.traceback[0].lineno}"
        for stat in stats[:limit]
    ]


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _start_recorder(scheduler: CheckScheduler) -> float:
    """Start the database worker and wait until it answers; its CPU so far (imports)."""
    child = scheduler.records
    if not isinstance(child, DatabaseWorker):
        return 0.0
    child.record([], datetime.now(UTC))  # an empty batch: answered once it is up
    return cpu_s(f"/proc/{child.pid}/stat")


def _exclude_from_lags(scheduler: CheckScheduler, monitor_ids: set[int]) -> list[float]:
    """Lags of every run but those of *monitor_ids*, collected as runs end."""
    lags: list[float] = []
    on_done = scheduler._on_done

    def record(jobs: list[ProbeJob]) -> None:
        lags.extend(
            (job.started_at - job.key.due).total_seconds()
            for job in jobs
            if not job.cancelled
            and job.started_at is not None
            and job.key.monitor_id not in monitor_ids
        )
        on_done(jobs)

    scheduler._on_done = record  # type: ignore[method-assign]
    return lags


def main() -> None:
    mode, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    shared = os.environ.get("BENCH_SHARED") == "1"
    tracing = os.environ.get("BENCH_TRACEMALLOC") == "1"
    if tracing:
        tracemalloc.start()
    settings = prepare(load_settings())
    in_process = os.environ.get("BENCH_RECORDER") == "thread"
    work = InProcess(settings) if in_process else DatabaseWorker(settings)
    scheduler = CheckScheduler(settings, claims=work, records=work)
    excluded = {int(i) for i in os.environ.get("BENCH_EXCLUDE_MONITORS", "").split(",") if i}
    kept_lags = _exclude_from_lags(scheduler, excluded) if excluded else None
    runner = LoopRunner(scheduler, Clock())
    gc_policy.apply(settings.gc_threshold)  # as the daemon does once its parts run
    recorder_cpu_before = _start_recorder(scheduler)
    threads_before = _threads_cpu()
    started, cpu = time.perf_counter(), time.process_time()
    runner.start()
    completed_at = recorded_at = None
    last_recorded, last_recorded_at = 0, None
    deadline = started + seconds
    while time.perf_counter() < deadline:
        time.sleep(0.005)
        if mode != "burst":
            continue
        now = time.perf_counter()
        if scheduler.writer.recorded > last_recorded:
            last_recorded, last_recorded_at = scheduler.writer.recorded, now
        elif (
            shared
            and last_recorded_at is not None
            and now - last_recorded_at > IDLE_STOP
            and _nothing_left(scheduler)
        ):
            break  # the other processes took the rest: nothing left for this one
        if completed_at is None and scheduler.dispatched >= count and not scheduler.probes.pending:
            completed_at = now
        if scheduler.writer.recorded >= count:
            recorded_at = now
            break
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    lags = list(scheduler.dispatch_lags if kept_lags is None else kept_lags)
    rss = _rss_mb(os.getpid())
    heap = _top_allocations() if tracing else None
    threads_cpu = {
        name: round(value - threads_before.get(name, 0.0), 2)
        for name, value in _threads_cpu().items()
    }
    child = scheduler.records
    recorder_cpu = None
    if isinstance(child, DatabaseWorker) and child.pid is not None:
        rss["recorder_VmRSS"] = _rss_mb(child.pid).get("VmRSS", 0.0)
        recorder_cpu = cpu_s(f"/proc/{child.pid}/stat") - recorder_cpu_before
    runner.stop(settings.shutdown_grace)
    print(
        json.dumps(
            {
                "elapsed": elapsed,
                "cpu_s": cpu,
                "dispatched": scheduler.dispatched,
                "recorded": scheduler.writer.recorded,
                "completed_s": None if completed_at is None else completed_at - started,
                "recorded_s": None if recorded_at is None else recorded_at - started,
                "last_recorded_s": (
                    None if last_recorded_at is None else last_recorded_at - started
                ),
                "recorder_pid": None
                if child is None or child._process is None
                else child._process.pid,
                "lag_p50": _percentile(lags, 0.50),
                "lag_p99": _percentile(lags, 0.99),
                "lag_max": max(lags) if lags else None,
                "lag_mean": statistics.fmean(lags) if lags else None,
                "rss_mb": rss,
                "threads_cpu_s": threads_cpu,
                "recorder_cpu_s": recorder_cpu,
                "top_allocations": heap,
            }
        )
    )


if __name__ == "__main__":
    main()
