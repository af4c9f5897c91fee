"""The heartbeat "probe": judges, when a heartbeat monitor's deadline falls due, that no ping came.

A heartbeat monitor's scheduling row is due at its deadline (expected time +
grace): every finishing ping moves it on (``engine.ping_sink``), so a claim of
that row means no finishing ping arrived in time. The verdict is a failed run,
recorded like any check's (alert_threshold, incidents, emails, stats), and it
carries the ``state_version`` it was drawn from: a ping recorded between the
claim and this verdict makes the verdict stale, and the recorder drops it.

Its message says what happened: "started at T, never finished" when a start
ping is still open (the job hangs), else "no ping by D" (the deadline missed).
The next due time is the next slot's deadline (``heartbeats.schedule``).
"""

from __future__ import annotations

from datetime import datetime

from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.clock import isoformat
from uptime_server.heartbeats.schedule import HeartbeatSchedule


async def heartbeat_check(prober: Probing, spec: CheckSpec) -> RunResult:
    return heartbeat_verdict(spec)


def heartbeat_verdict(spec: CheckSpec) -> RunResult:
    options = spec.options
    schedule = HeartbeatSchedule.of(options)
    deadline: datetime | None = options.get("deadline")
    started: datetime | None = options.get("ping_started_at")
    if started is not None:
        error = f"started at {isoformat(started)}, never finished"
    elif deadline is not None:
        error = f"no ping by {isoformat(deadline)}"
    else:
        error = "no ping in time"

    def next_due(now: datetime) -> datetime:
        return schedule.next_deadline(deadline or now, now)

    return RunResult(
        passed=False,
        response_time=None,
        status_code=None,
        error=error,
        next_due=next_due,
        expect_version=options.get("state_version"),
    )
