"""Heartbeat pings recorded: one at a time, or by group commit (``PingSink``).

A ping is recorded through the same recorder as a check run (one transaction:
the history entry, the monitor's new state, notifications and outbox rows,
the next deadline), so alert thresholds, recovery, email, Slack, ack/resolve
and the figures work for heartbeats as for any monitor.

What each kind of ping does is ``heartbeats.kinds``.

The answering thread only hands the ping over (``heartbeats.batch.PingIn``: the
token's hash and what the ping carried); the token lookup, the outcome and
the write are ``heartbeats.batch.record_pings``, for a whole batch at once. The
daemon records through a ``PingSink`` (group commit: the pings that arrived
during the previous commit looked up and written together, by the
database worker's child process); without one (tests, embedding, ``server run --no-api`` has no
pings) each ping is looked up and written on its own. Either way a ping is
answered only once it is committed.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime
from typing import Any, Protocol

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db.outages import OUTAGES, Link, unavailable
from uptime_server.engine.recorder import Recorder
from uptime_server.heartbeats.batch import PingIn, record_pings

log = logging.getLogger(__name__)


def record(ping: PingIn, settings: Settings, *, now: datetime, sink: Any) -> str:
    """The answer to *ping* once it is recorded (``heartbeats.batch``: RECORDED, PAUSED...)."""
    if sink is not None:
        return sink.record(ping)
    return record_pings(Recorder(settings), [ping], now=now)[0]


class PingRecords(Protocol):
    """Where a batch of pings is recorded: ``engine.worker``'s ``InProcess`` (here) or
    ``DatabaseWorker`` (in its child; ``remote``: the ping writer's thread then
    needs no connection of its own). The ``PingSink`` starts and closes it."""

    remote: bool

    def start(self) -> None: ...

    def close(self, timeout: float = ...) -> None: ...

    def record_pings(self, pings: list[PingIn], now: datetime) -> list[str]: ...


class PingNotRecorded(RuntimeError):
    """The writer could not commit the ping (answered 503: the client sends it again)."""


class _Batch:
    """The pings of one commit, and the one event all their requests wait on."""

    __slots__ = ("pings", "answers", "committed", "error")

    def __init__(self) -> None:
        self.pings: list[PingIn] = []
        self.answers: list[str] = []
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
    them. The batch's token lookup and its transaction are *records*'s
    ``record_pings``: in the daemon a ``DatabaseWorker``'s child, so the
    database work does not take the GIL from the threads answering; it
    answers each ping (recorded, paused, unknown token).
    """

    COMMIT_TIMEOUT = 10.0  # seconds a request waits for its commit before a 503

    def __init__(self, records: PingRecords, clock: Clock) -> None:
        self.records = records
        self.clock = clock
        self._ready = threading.Condition()
        self._pending = _Batch()
        self._closing = False
        self._thread: threading.Thread | None = None
        self.commits = 0

    def start(self) -> None:
        self.records.start()
        with self._ready:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ping-writer", daemon=True)
                self._thread.start()

    def record(self, ping: PingIn) -> str:
        """*ping*'s answer once its batch is committed; ``PingNotRecorded`` if it was not."""
        with self._ready:
            if self._closing or self._thread is None:
                raise PingNotRecorded("the ping writer is not running")
            batch = self._pending
            index = len(batch.pings)
            batch.pings.append(ping)
            self._ready.notify()
        if not batch.committed.wait(self.COMMIT_TIMEOUT):
            raise PingNotRecorded("the ping's commit did not end in time")
        if batch.error is not None:
            raise PingNotRecorded("the ping's commit failed") from batch.error
        return batch.answers[index]

    def close(self, timeout: float | None = None) -> None:
        """Commit what is queued, then stop the writer (after the last request).

        *timeout*: seconds for all of it (the daemon's shutdown grace); by
        default a commit's ``COMMIT_TIMEOUT`` and then the database worker's own.
        """
        deadline = time.monotonic() + (2 * self.COMMIT_TIMEOUT if timeout is None else timeout)
        with self._ready:
            self._closing = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join(min(self.COMMIT_TIMEOUT, max(0.0, deadline - time.monotonic())))
        self.records.close(max(0.1, deadline - time.monotonic()))

    def _run(self) -> None:
        # In process the thread writes through a connection of its own, held
        # (and opened again after the database dropped it); the database
        # worker's child has one.
        link = None if self.records.remote else Link()
        try:
            while True:
                with self._ready:
                    self._ready.wait_for(lambda: self._pending.pings or self._closing)
                    batch, self._pending = self._pending, _Batch()
                if batch.pings:
                    self._commit(batch, link)
                elif self._closing:
                    return
        finally:
            if link is not None:
                link.close()

    def _commit(self, batch: _Batch, link: Link | None) -> None:
        try:
            now = self.clock.now()
            if link is None:
                batch.answers = self.records.record_pings(batch.pings, now)
            else:
                batch.answers = link.run(self.records.record_pings, batch.pings, now)
            self.commits += 1
            OUTAGES.recovered()
        except Exception as exc:  # its requests answer 503: the clients send them again
            if unavailable(exc):
                OUTAGES.failed(exc, "ping writer")
            else:
                log.exception("ping writer: committing %d pings failed", len(batch.pings))
            batch.error = exc
        batch.committed.set()
