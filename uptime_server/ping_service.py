"""Heartbeat pings: the token's monitor, the outcome a ping makes, and recording it.

A ping is recorded through the same recorder as a check run (one transaction:
the history entry, the monitor's new state, notifications and outbox rows,
the next deadline), so alert thresholds, recovery, email, Slack, ack/resolve
and the figures work for heartbeats as for any monitor.

What each ping does (docs/monitors.md#heartbeat-monitors):

- ``success`` (and exit code 0): a passed run; its response time is the time
  since an open ``start``, if any. The next deadline is the next expected
  time after now, plus grace.
- ``fail`` (and a non-zero exit code): a failed run, offline at once (after
  ``alert_threshold`` such runs, a downtime notification); the deadline
  moves on as for a success: the job did run.
- ``start``: opens a run (its time is kept until a finishing ping); a history
  entry, no state change. Still open at the deadline: "started at T, never
  finished".
- ``log``: a history entry only.

The daemon records through a ``PingSink`` (the pings of the last 50 ms
written in one transaction, by a child process); without one (tests,
embedding, ``server run --no-api`` has no pings) each ping is written, in its
own transaction, before it is answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database
from uptime_server.engine.heartbeat_schedule import HeartbeatSchedule
from uptime_server.engine.outcomes import CheckOutcome, PingFacts
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.recorder_process import RecorderProcess
from uptime_server.engine.writer import ResultWriter
from uptime_server.models import Monitor
from uptime_server.ping_tokens import MAX_TOKEN, token_hash

MAX_MESSAGE = 10 * 1024  # bytes of a ping's body kept as its message
ERROR_MESSAGE_START = 200  # characters of the message quoted in a failure's error

# What the ping path reads of a monitor: one indexed lookup by token hash,
# its SQL written once (building it per request costs more than running it).
_COLUMNS = (
    Monitor.id,
    Monitor.created_at,
    Monitor.paused,
    Monitor.period,
    Monitor.grace,
    Monitor.cron,
    Monitor.timezone,
    Monitor.locations,
    Monitor.ping_started_at,
)
_LOOKUP = (
    f"SELECT {', '.join(c.column_name for c in _COLUMNS)} FROM monitors "
    "WHERE ping_token_hash = ? AND type = 'heartbeat'"
)


@dataclass(frozen=True)
class Ping:
    kind: str  # PING_KINDS
    exit_code: int | None
    body: bytes
    source_ip: str | None
    user_agent: str | None


def find_monitor(token: str) -> dict[str, Any] | None:
    """The heartbeat monitor of *token* (the columns the ping path needs), or None."""
    if not token or len(token) > MAX_TOKEN:
        return None
    row = database.execute_sql(_LOOKUP.replace("?", database.param), (token_hash(token),))
    found = row.fetchone()
    if found is None:
        return None
    return {f.name: f.python_value(v) for f, v in zip(_COLUMNS, found, strict=True)}


def outcome_of(monitor: dict[str, Any], ping: Ping, now: datetime) -> CheckOutcome:
    """The run a ping makes of *monitor* (a ``find_monitor`` row) at *now*."""
    message = ping.body[:MAX_MESSAGE].decode("utf-8", "replace").replace("\x00", "") or None
    facts = PingFacts(
        kind=ping.kind,
        exit_code=ping.exit_code,
        message=message,
        source_ip=(ping.source_ip or "")[:64] or None,
        user_agent=(ping.user_agent or "")[:512] or None,
    )
    finishing = ping.kind in ("success", "fail", "exit")
    passed = ping.kind == "success" or (ping.kind == "exit" and ping.exit_code == 0)
    started: datetime | None = monitor["ping_started_at"]
    duration = None
    if finishing and started is not None and started <= now:
        duration = round((now - started).total_seconds() * 1000)
    return CheckOutcome(
        monitor_id=monitor["id"],
        monitor_created_at=monitor["created_at"],
        location=(monitor["locations"] or ["local"])[0],
        checked_at=now,
        passed=passed or not finishing,
        response_time=duration,
        status_code=None,
        error=None if passed or not finishing else _failure(ping, message),
        next_check_at=HeartbeatSchedule.of(monitor).deadline_after(now) if finishing else None,
        ping=facts,
    )


def _failure(ping: Ping, message: str | None) -> str:
    what = f"exit code {ping.exit_code}" if ping.kind == "exit" else "failure reported"
    first = (message or "").strip().splitlines()[:1]
    if first and first[0].strip():
        return f"{what}: {first[0].strip()[:ERROR_MESSAGE_START]}"
    return what


def record(outcome: CheckOutcome, settings: Settings, *, now: datetime, sink: Any) -> None:
    if sink is not None:
        sink.record(outcome)
        return
    Recorder(settings).record([outcome], now=now)


class PingSink:
    """Pings recorded in batches by one writer, off the request path.

    A request queues its ping and is answered; the writer (``ResultWriter``)
    writes what has queued, up to ``MAX_WAIT`` later, in one transaction, in
    a child process (``RecorderProcess``) so the database work does not take
    the GIL from the threads answering requests. The queue is bounded: with
    more than ``MAX_BACKLOG`` pings unwritten (the database is down or slower
    than the pings), a request waits for the writer before it is answered.
    Shutdown writes everything queued before the daemon exits; a killed
    daemon loses the pings of its last ``MAX_WAIT`` at most.
    """

    MAX_WAIT = 0.05  # seconds a ping may wait for its batch
    MAX_BACKLOG = 5000
    FLUSH_TIMEOUT = 10.0

    def __init__(self, settings: Settings, clock: Clock, *, in_process: bool = False) -> None:
        self.child = None if in_process else RecorderProcess(settings)
        self.writer = ResultWriter(
            self.child or Recorder(settings),
            clock,
            push_forward=lambda claims, now: None,  # pings hold no lease
            max_wait=self.MAX_WAIT,
            name="ping-writer",
        )

    def start(self) -> None:
        if self.child is not None:
            self.child.start()
        self.writer.start()

    def record(self, outcome: CheckOutcome) -> None:
        self.writer.put(outcome)
        if self.writer.backlog > self.MAX_BACKLOG:
            self.writer.flush(self.FLUSH_TIMEOUT)

    def close(self) -> None:
        self.writer.stop()
        if self.child is not None:
            self.child.close()
