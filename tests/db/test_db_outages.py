"""``db.outages``: errors that mean the database went away, new connections, one line an outage."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from datetime import datetime
from typing import Any

import peewee
import psycopg
import psycopg.errors
import pytest

from uptime_server import db as dbmod
from uptime_server.daemon import loops
from uptime_server.db.outages import (
    OUTAGES,
    DatabaseUnavailable,
    Link,
    OutageLog,
    backoff,
    describe,
    unavailable,
)


def wrapped(exc: Exception, kind: type[peewee.PeeweeException] = peewee.OperationalError) -> Any:
    """*exc* as peewee re-raises a driver's error."""
    return kind(exc, *exc.args)


def test_it_tells_a_lost_database_from_a_statements_own_error() -> None:
    gone = [
        wrapped(psycopg.OperationalError("server closed the connection unexpectedly\n\tmore")),
        wrapped(psycopg.InterfaceError("connection already closed"), peewee.InterfaceError),
        wrapped(psycopg.errors.AdminShutdown("terminating connection")),
        wrapped(sqlite3.OperationalError("database is locked")),
        # Connecting inside a query's first statement: wrapped by both.
        wrapped(wrapped(psycopg.OperationalError("Connection refused"))),
        DatabaseUnavailable("Connection refused"),
    ]
    own = [
        wrapped(psycopg.errors.UniqueViolation("duplicate key"), peewee.IntegrityError),
        wrapped(psycopg.errors.DeadlockDetected("deadlock detected")),
        wrapped(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")),
        wrapped(sqlite3.OperationalError("no such table: monitors")),
        RuntimeError("a bug"),
    ]
    assert [unavailable(e) for e in gone] == [True] * len(gone)
    assert [unavailable(e) for e in own] == [False] * len(own)
    assert describe(gone[0]) == "server closed the connection unexpectedly"


def test_a_connection_refused_is_unavailable() -> None:
    # Nothing listens on port 1 of the loopback: refused at once.
    refused = dbmod.connect_url("postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(peewee.OperationalError) as raised:
        refused.connect()
    assert unavailable(raised.value)


def test_the_backoff_doubles_up_to_a_few_seconds() -> None:
    assert [backoff(n) for n in range(7)] == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert backoff(10_000) == 4.0


def test_an_outage_is_one_warning_however_many_failures_and_one_line_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="uptime.database")
    now = [100.0]
    outages = OutageLog(clock=lambda: now[0])
    gone = wrapped(psycopg.OperationalError("connection refused"))
    for where in ("writer", "scheduler", "writer", "delivery"):
        outages.failed(gone, where)
    now[0] += 12.5
    outages.recovered()
    outages.recovered()
    outages.failed(gone, "writer")  # the next outage
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        (
            "WARNING",
            "database unavailable (writer: connection refused); "
            "retrying every few seconds until it is back",
        ),
        ("INFO", "database available again after 12.5 s"),
        (
            "WARNING",
            "database unavailable (writer: connection refused); "
            "retrying every few seconds until it is back",
        ),
    ]
    assert outages.outages == 2 and outages.down


@pytest.fixture
def pg(db: Any, settings: Any) -> str:
    """The test database's URL, on PostgreSQL only."""
    if dbmod.is_sqlite():
        pytest.skip("a PostgreSQL backend is what gets terminated")
    return settings.database_url


def backend_pid() -> int:
    return dbmod.database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]


def terminate(url: str, pid: int) -> None:
    """End one backend from another connection, as a restart or failover would."""
    admin = psycopg.connect(url)
    admin.autocommit = True
    try:
        with admin.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(%s)", (pid,))
            deadline = time.monotonic() + 10
            while True:
                cur.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))
                if not cur.fetchone()[0]:
                    break
                assert time.monotonic() < deadline, "the backend did not end"
                time.sleep(0.05)
    finally:
        admin.close()


def test_a_link_opens_a_new_connection_when_the_database_dropped_its_own(pg: str) -> None:
    link = Link()
    try:
        first = link.run(backend_pid)
        assert link.run(backend_pid) == first  # held between pieces of work
        terminate(pg, first)
        second = link.run(backend_pid)  # failed on the dead one, then ran on a new one
        assert second != first
        assert link.take_reconnects() == 1 and link.take_reconnects() == 0
        assert link.run(backend_pid) == second
    finally:
        link.close()
    assert dbmod.database.is_closed()


def test_a_link_without_a_database_raises_at_once_and_reconnects_later(pg: str) -> None:
    real = dbmod.database.obj
    link = Link()
    try:
        first = link.run(backend_pid)
        terminate(pg, first)
        dbmod.database.initialize(dbmod.connect_url("postgresql://nobody@127.0.0.1:1/none"))
        with pytest.raises(peewee.OperationalError) as raised:
            link.run(backend_pid)  # nothing to connect to: down, said at once
        assert unavailable(raised.value) and link.lost
        dbmod.database.initialize(real)  # the database is back
        assert link.run(backend_pid) != first
        assert link.take_reconnects() == 1
    finally:
        link.close()
        dbmod.database.initialize(real)


def test_a_link_does_not_retry_a_lock_held_too_long_at_once(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not dbmod.is_sqlite():
        pytest.skip("SQLite's lock")
    monkeypatch.setitem(dbmod.SQLITE_PRAGMAS, "busy_timeout", 50)
    quick = dbmod.bind(settings.database_url)
    holder = sqlite3.connect(settings.database_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    tries: list[int] = []

    def write() -> None:
        tries.append(1)
        with dbmod.write_tx():
            dbmod.database.execute_sql("CREATE TABLE scratch (x INTEGER)")

    link = Link()
    try:
        with pytest.raises(peewee.OperationalError, match="locked") as raised:
            link.run(write)
        assert unavailable(raised.value) and tries == [1]
        holder.execute("COMMIT")
        link.run(write)
        assert tries == [1, 1] and link.take_reconnects() == 1
    finally:
        holder.close()
        link.close()
        quick.close_all()


class Flaky:
    """A loop component whose database is gone for its first *down* iterations."""

    name = "flaky"

    def __init__(self, down: int) -> None:
        self.down = down
        self.calls = 0
        self.done = threading.Event()

    def loop(self, now: datetime) -> float:
        self.calls += 1
        if self.calls <= self.down:
            raise wrapped(psycopg.OperationalError("connection refused"))
        self.done.set()
        return 60.0

    def shutdown(self, grace: float) -> None:
        pass


def test_a_loop_retries_a_lost_database_with_backoff_and_logs_the_outage_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[int] = []
    monkeypatch.setattr(loops, "backoff", lambda n: waits.append(n) or 0.01)
    OUTAGES.recovered()
    caplog.set_level(logging.INFO, logger="uptime.database")
    caplog.clear()
    component = Flaky(down=4)
    runner = loops.LoopRunner(component)
    runner.start()
    try:
        assert component.done.wait(10)
    finally:
        runner.stop(1)
    assert waits == [0, 1, 2, 3]  # backing off, not the 5 s pause of a bug
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert messages[0].startswith("database unavailable (flaky: connection refused)")
    assert messages[1].startswith("database available again")
    assert not [r for r in caplog.records if r.exc_info]
