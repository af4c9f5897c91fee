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

The daemon records through a ``PingSink`` (group commit: the pings that
arrived during the previous commit written in one transaction, by a child
process); without one (tests, embedding, ``server run --no-api`` has no
pings) each ping is written in its own transaction. Either way a ping is
answered only once it is committed.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
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
from uptime_server.models import Monitor
from uptime_server.ping_tokens import MAX_TOKEN, token_hash

log = logging.getLogger(__name__)

MAX_MESSAGE = 10 * 1024  # bytes of a ping's body kept as its message
ERROR_MESSAGE_START = 200  # characters of the message quoted in a failure's error

# What the ping path reads of a monitor: one indexed lookup by token hash,
# its SQL written once (building it per request costs more than running it).
# Plain text rather than db.Prepared: 14 µs against 20 µs a lookup, on every ping.
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


_EXIT_CODE = re.compile(r"^[0-9]{1,3}$")
MAX_EXIT_CODE = 255
UNKNOWN_KIND = "Unknown ping kind: use start, fail, log or an exit code 0..255"


def kind_of(suffix: str | None) -> tuple[str, int | None] | None:
    """The kind and exit code of a ping path's suffix; None for no kind of ours."""
    if suffix is None:
        return "success", None
    if suffix in ("start", "fail", "log"):
        return suffix, None
    if _EXIT_CODE.match(suffix) and int(suffix) <= MAX_EXIT_CODE:
        return "exit", int(suffix)
    return None


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


class PingNotRecorded(RuntimeError):
    """The writer could not commit the ping (answered 503: the client sends it again)."""


class _Batch:
    """The pings of one commit, and the one event all their requests wait on."""

    __slots__ = ("outcomes", "committed", "error")

    def __init__(self) -> None:
        self.outcomes: list[CheckOutcome] = []
        self.committed = threading.Event()
        self.error: BaseException | None = None


class PingSink:
    """Pings recorded by group commit: each request waits for the commit of its ping.

    One writer thread commits whatever pings have queued, in one transaction,
    as soon as its previous commit ends (no timer): an idle daemon writes a
    ping at once, a busy one gathers all the pings that arrived during the
    last commit into the next. The request is answered once its batch is
    committed, so a ping answered 200 is in the database and a killed daemon
    loses no acknowledged ping; a batch that cannot be written fails its
    requests (503, sent again by the client) rather than being retried under
    them. The transaction runs in a child process (``RecorderProcess``) so
    the database work does not take the GIL from the threads answering.
    """

    COMMIT_TIMEOUT = 10.0  # seconds a request waits for its commit before a 503

    def __init__(self, settings: Settings, clock: Clock, *, in_process: bool = False) -> None:
        self.child = None if in_process else RecorderProcess(settings)
        self.recorder: Any = self.child or Recorder(settings)
        self.clock = clock
        self._ready = threading.Condition()
        self._pending = _Batch()
        self._closing = False
        self._thread: threading.Thread | None = None
        self.commits = 0

    def start(self) -> None:
        if self.child is not None:
            self.child.start()
        with self._ready:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ping-writer", daemon=True)
                self._thread.start()

    def record(self, outcome: CheckOutcome) -> None:
        """Return once *outcome* is committed; ``PingNotRecorded`` if it was not."""
        with self._ready:
            if self._closing or self._thread is None:
                raise PingNotRecorded("the ping writer is not running")
            batch = self._pending
            batch.outcomes.append(outcome)
            self._ready.notify()
        if not batch.committed.wait(self.COMMIT_TIMEOUT):
            raise PingNotRecorded("the ping's commit did not end in time")
        if batch.error is not None:
            raise PingNotRecorded("the ping's commit failed") from batch.error

    def close(self) -> None:
        """Commit what is queued, then stop the writer (after the last request)."""
        with self._ready:
            self._closing = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join(self.COMMIT_TIMEOUT)
        if self.child is not None:
            self.child.close()

    def _run(self) -> None:
        # In process the thread writes through its own connection; with a
        # child, the child has one.
        with database.connection_context() if self.child is None else contextlib.nullcontext():
            while True:
                with self._ready:
                    self._ready.wait_for(lambda: self._pending.outcomes or self._closing)
                    batch, self._pending = self._pending, _Batch()
                if batch.outcomes:
                    self._commit(batch)
                elif self._closing:
                    return

    def _commit(self, batch: _Batch) -> None:
        try:
            # The child sends back no results: the requests need only the commit.
            record = getattr(self.recorder, "record_quietly", self.recorder.record)
            record(batch.outcomes, now=self.clock.now())
            self.commits += 1
        except Exception as exc:  # its requests answer 503: the clients send them again
            log.exception("ping writer: committing %d pings failed", len(batch.outcomes))
            batch.error = exc
        batch.committed.set()
