"""When the database goes away: which errors say so, a new connection, one log line per outage.

A PostgreSQL restart, a failover or a terminated backend leaves every
connection opened before it dead: its next statement fails ("server closed the
connection unexpectedly", then "connection already closed" for ever after).
SQLite has no connection to lose, but another process may hold its write lock
past the busy timeout ("database is locked"). Either way the work is sound and
the database is not; the caller keeps the work and tries again later.

``unavailable(exc)``
    Whether *exc* is such an error, as opposed to one of the statement's own
    (a constraint, a bug): only those are worth retrying for ever, and only
    those are logged as an outage rather than with a traceback.

``drop_connection()``
    After such an error, this thread's connection is closed (the pool throws
    a broken one away), so the next statement opens a new one.

``Link``
    A thread that holds one connection for its life (the database worker's)
    runs each piece of work through its link: if the work fails because the
    connection it held had died meanwhile, it is tried once more, at once, on
    a new connection, so a restart that ended before the work arrived costs
    nothing. The link counts the connections it had to open again.

``OUTAGES``
    This process's ``OutageLog``: one warning when a part of the process first
    finds the database unavailable, one line when one finds it back, however
    many parts and retries meet the outage in between (an info line, so the
    end shows at the default log level while the start stands out).

``REQUESTS``
    The API's requests that met an unavailable database: they answer 503 (the
    client tries again), and the log gets one warning a minute about them,
    not a traceback per request.

``backoff(attempt)``
    How long to wait before the next try: doubling from 0.25 s, at most
    ``MAX_BACKOFF``, so work resumes within seconds of the database's return.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import peewee

from uptime_server.db.connection import database, is_sqlite

log = logging.getLogger("uptime.database")

T = TypeVar("T")

FIRST_BACKOFF = 0.25  # seconds
MAX_BACKOFF = 4.0  # seconds: the longest wait between two tries

# SQLite errors that say the file cannot be used now, not that the statement is wrong.
_SQLITE_UNAVAILABLE = ("locked", "busy", "unable to open", "disk i/o")
_QUERY_CANCELED = "57014"


class DatabaseUnavailable(Exception):
    """Another process (the database worker) found the database unavailable."""


def unavailable(exc: BaseException) -> bool:
    """Whether *exc* says the database cannot be used right now (see the module doc)."""
    if isinstance(exc, DatabaseUnavailable):
        return True
    cause = _driver_error(exc)
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        # psycopg 3 has no class for these: SQLSTATE class 40 (a deadlock, a
        # serialization failure) and 57014 (a statement timeout) say so.
        sqlstate = getattr(cause, "sqlstate", None) or ""
        if sqlstate.startswith("40") or sqlstate == _QUERY_CANCELED:
            return False
        if isinstance(cause, psycopg.OperationalError | psycopg.InterfaceError):
            return True
    if isinstance(cause, sqlite3.OperationalError):
        return any(part in str(cause).lower() for part in _SQLITE_UNAVAILABLE)
    return False


def _driver_error(exc: BaseException) -> BaseException:
    """The driver's exception that peewee wrapped in *exc* (its ``orig``), else *exc*.

    A connection opened by a query's first statement is wrapped twice: once by
    ``connect``, once more by the statement.
    """
    while isinstance(exc, peewee.PeeweeException):
        orig = getattr(exc, "orig", None)
        if not isinstance(orig, BaseException):
            break
        exc = orig
    return exc


def describe(exc: BaseException) -> str:
    """The first line of *exc*'s message (psycopg's run over several)."""
    text = str(_driver_error(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def drop_connection() -> None:
    """Close this thread's connection, if open; the next statement opens a new one."""
    if database.obj is None or database.is_closed():
        return
    try:
        database.close()  # the pool keeps it only if it still works
    except Exception:  # closing a dead connection may fail too: forget it
        state = database.obj._state
        state.transactions.clear()
        state.reset()


def backoff(attempt: int) -> float:
    """Seconds to wait before try number *attempt* + 1 (*attempt* counts from 0)."""
    return min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** min(attempt, 16))


class Link:
    """One thread's connection, held between pieces of work and opened again when it died.

    peewee forgets every ``connection_context`` of a thread whose connection
    is closed, so a thread cannot just hold one around its loop: the link
    enters one whenever its thread has no connection, and leaves it open
    (nested contexts inside the work then leave it alone) until ``close``.
    """

    def __init__(self) -> None:
        self.lost = False  # a connection was dropped; none has worked since
        self._reconnects = 0

    def run(self, work: Callable[..., T], *args: object) -> T:
        """``work(*args)`` on this thread's connection; once more on a new one if it had died.

        Raises what the work raised otherwise: a statement's own error, or
        the database's unavailability once a new connection fails too (or
        when there was none to begin with: connecting is what failed).
        """
        for attempt in (0, 1):
            was_open = not database.is_closed()
            try:
                if not was_open:
                    database.connection_context().__enter__()  # left in close()
                result = work(*args)
            except Exception as exc:
                if not unavailable(exc):
                    raise
                drop_connection()
                self.lost = True
                # SQLite's connection is not what failed (its lock was held too
                # long): trying again at once would only wait as long again.
                if attempt or not was_open or is_sqlite():
                    raise
                continue
            if self.lost:
                self.lost = False
                self._reconnects += 1
            return result
        raise AssertionError("unreachable")

    def take_reconnects(self) -> int:
        """The connections opened again since the last call."""
        taken, self._reconnects = self._reconnects, 0
        return taken

    def close(self) -> None:
        """Give the connection back (the thread is done)."""
        drop_connection()


class OutageLog:
    """One warning when the database is first found unavailable, one line when it is back."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self.outages = 0

    @property
    def down(self) -> bool:
        return self._since is not None

    def failed(self, exc: BaseException, where: str) -> None:
        """*where* (a part of the process) found the database unavailable with *exc*."""
        with self._lock:
            if self._since is not None:
                return
            self._since = self._clock()
            self.outages += 1
        log.warning(
            "database unavailable (%s: %s); retrying every few seconds until it is back",
            where,
            describe(exc),
        )

    def recovered(self) -> None:
        """A part of the process used the database again."""
        if self._since is None:  # the common case, without the lock
            return
        with self._lock:
            if self._since is None:
                return
            down, self._since = self._clock() - self._since, None
        log.info("database available again after %.1f s", down)


OUTAGES = OutageLog()


class RequestOutages:
    """Requests that found the database unavailable: one warning a minute, however many.

    A request has no loop to notice the database's return, so unlike
    ``OutageLog`` this says nothing when it is back; a quiet minute ends the
    count.
    """

    QUIET = 60.0  # seconds between two warnings

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None
        self._missed = 0

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last < self.QUIET:
                self._missed += 1
                return
            missed, self._missed, self._last = self._missed, 0, now
        log.warning(
            "database unavailable for API requests (%s); they answer 503 until it is back%s",
            describe(exc),
            f" ({missed} more in the last minute)" if missed else "",
        )


REQUESTS = RequestOutages()
