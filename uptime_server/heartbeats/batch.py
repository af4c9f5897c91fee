"""A batch of heartbeat pings recorded: their tokens' monitors, their outcomes, one answer each.

The answering threads hand over each ping as a ``PingIn`` (a named tuple):
the token's hash and what the ping carried, with the time it arrived. This
module, run by the database worker's child (or, without one, by the ping writer
thread or the request itself), turns a batch of them into answers:

- **Lookup**: the batch's tokens in one indexed read
  (``WHERE ping_token_hash IN (...)``, a ``db.Prepared`` text per size
  class), not one read per ping in the answering process, whose single GIL
  caps the ping rate.
- **Outcomes**: each ping's run (``outcome_of``), in arrival order. A batch
  may hold a ``start`` and the ping that finishes that run: the finish must
  see the start as it would had the start been committed first, so the open
  start is carried from ping to ping of one monitor in memory, exactly as the
  recorder writes it (a start sets it, a finishing ping clears it, a log
  leaves it).
- **Answers**: ``UNKNOWN`` (404: no such token, or its monitor deleted before
  the write), ``PAUSED`` (200, nothing recorded), ``RECORDED`` (200, in the
  database once the recorder returns), ``FAILED`` (500: this ping's outcome
  could not be drawn; the rest of the batch is recorded).

A batch the recorder cannot write raises: every ping of it is unrecorded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import peewee

from uptime_server.checks.outcomes import CheckOutcome, PingFacts, Recorded
from uptime_server.db import Prepared
from uptime_server.heartbeats.schedule import HeartbeatSchedule
from uptime_server.models import Monitor
from uptime_server.printable import printable

log = logging.getLogger(__name__)

MAX_MESSAGE = 10 * 1024  # bytes of a ping's body kept as its message
ERROR_MESSAGE_START = 200  # characters of the message quoted in a failure's error


class PingIn(NamedTuple):
    """What a ping asks: its token's hash, what it carried, and when it arrived.

    A tuple underneath: a batch of them pickles to the database worker's
    child as their values, with the class named once.
    """

    token_hash: str
    kind: str  # PING_KINDS
    exit_code: int | None
    body: bytes
    source_ip: str | None
    user_agent: str | None
    at: datetime


RECORDED, PAUSED, UNKNOWN, FAILED = "recorded", "paused", "unknown", "failed"

_FINISHING = frozenset(("success", "fail", "exit"))
# The recorder's reasons for writing nothing that mean "no such monitor" now.
_GONE = frozenset(("deleted", "replaced"))

# What the ping path reads of a monitor.
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
_NAMES = tuple(c.name for c in _COLUMNS)


def _monitors_query(hashes: list[str]) -> peewee.Query:
    return (
        Monitor.select(Monitor.ping_token_hash, *_COLUMNS)
        .where(Monitor.ping_token_hash.in_(hashes) & (Monitor.type == "heartbeat"))
        .tuples()
    )


_MONITORS = Prepared(_monitors_query)


@dataclass(frozen=True)
class Ping:
    kind: str  # PING_KINDS
    exit_code: int | None
    body: bytes
    source_ip: str | None
    user_agent: str | None


def find_monitors(hashes: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The heartbeat monitors of these token hashes (the columns the ping path needs)."""
    if not hashes:
        return {}
    return {row[0]: dict(zip(_NAMES, row[1:], strict=True)) for row in _MONITORS.rows(list(hashes))}


def record_pings(recorder: Any, pings: Sequence[PingIn], *, now: datetime) -> list[str]:
    """Record a batch of pings through *recorder* (a ``Recorder``); one answer per ping."""
    monitors = find_monitors(list({p.token_hash for p in pings}))
    started: dict[int, datetime | None] = {}  # each monitor's open start, as the batch left it
    answers: list[str] = []
    outcomes: list[CheckOutcome] = []
    recorded_at: list[int] = []  # the answer of each outcome
    for token_hash, kind, exit_code, body, source_ip, user_agent, at in pings:
        monitor = monitors.get(token_hash)
        if monitor is None or monitor["paused"]:
            answers.append(UNKNOWN if monitor is None else PAUSED)
            continue
        mid = monitor["id"]
        open_start = started.get(mid, monitor["ping_started_at"])
        try:
            ping = Ping(kind, exit_code, body, source_ip, user_agent)
            outcome = outcome_of(monitor, ping, at, started=open_start)
        except Exception:  # one bad monitor (a schedule that will not compute) never stops the rest
            log.exception("ping of monitor %s: its outcome failed", mid)
            answers.append(FAILED)
            continue
        if kind != "log":
            started[mid] = at if kind == "start" else None
        recorded_at.append(len(answers))
        answers.append(RECORDED)
        outcomes.append(outcome)
    if outcomes:
        done: list[Recorded] = recorder.record(outcomes, now=now)
        for index, result in zip(recorded_at, done, strict=True):
            if result.skipped in _GONE:
                answers[index] = UNKNOWN
    return answers


def outcome_of(
    monitor: dict[str, Any], ping: Ping, now: datetime, *, started: datetime | None
) -> CheckOutcome:
    """The run a ping makes of *monitor* (a ``find_monitors`` row) at *now*.

    *started*: the monitor's open start at the time of the ping (its
    ``ping_started_at``, or what earlier pings of the same batch left).
    """
    # A job's output is anyone's bytes: its control characters (an ESC that
    # drives a terminal, a CR that rewrites a log line) are gone before it is
    # stored, as a check's error is (docs/monitors.md, "No control characters").
    text = ping.body[:MAX_MESSAGE].decode("utf-8", "replace")
    message = printable(text) or None
    facts = PingFacts(
        kind=ping.kind,
        exit_code=ping.exit_code,
        message=message,
        source_ip=(ping.source_ip or "")[:64] or None,
        user_agent=printable((ping.user_agent or "")[:512]) or None,
    )
    finishing = ping.kind in _FINISHING
    passed = ping.kind == "success" or (ping.kind == "exit" and ping.exit_code == 0)
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
        error=None if passed or not finishing else _failure(ping, text),
        next_check_at=HeartbeatSchedule.of(monitor).deadline_after(now) if finishing else None,
        ping=facts,
    )


def _failure(ping: Ping, text: str) -> str:
    """The run's error: what failed, and the first line of the job's output."""
    what = f"exit code {ping.exit_code}" if ping.kind == "exit" else "failure reported"
    lines = text.strip().splitlines()
    first = (printable(lines[0]) or "").strip() if lines else ""
    return f"{what}: {first[:ERROR_MESSAGE_START]}" if first else what
