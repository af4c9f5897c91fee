"""Transactions: SQLite's writers queue in this process first, and retry when locked."""

from __future__ import annotations

import contextlib
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import peewee

from uptime_server.db.connection import SQLITE_PRAGMAS, database, is_sqlite

log = logging.getLogger("uptime_server.db")

T = TypeVar("T")


# Held around an SQLite write transaction by the thread that runs it: the
# writers of one process queue here, where a release wakes the next at once.
# Without it they queue inside SQLite, whose busy handler polls the lock with
# sleeps of 1, 2, 5, 10 ... 100 ms: under load a writer (the recorder
# process's claim thread beside its recorder) slept through the gaps between
# the other's transactions. Re-entrant, as transactions nest (savepoints).
_WRITERS = threading.RLock()


@contextlib.contextmanager
def write_tx() -> Iterator[None]:
    """A write transaction: BEGIN IMMEDIATE on SQLite, a plain BEGIN elsewhere.

    On SQLite the writers of this process take turns on ``_WRITERS`` first.
    It is waited for no longer than SQLite's busy timeout: past that the
    transaction queues on SQLite's own lock, as it would without it, and
    SQLite reports a lock held too long as it always has.
    """
    if not is_sqlite():
        with database.atomic():
            yield
        return
    held = _WRITERS.acquire(timeout=SQLITE_PRAGMAS["busy_timeout"] / 1000)
    try:
        with database.atomic("IMMEDIATE"):
            yield
    finally:
        if held:
            _WRITERS.release()


def retry_locked(fn: Callable[..., T], attempts: int = 8) -> Callable[..., T]:
    """Retry *fn* when SQLite reports the database locked (beyond busy_timeout).

    A check result must never be dropped silently: after the last attempt the
    error propagates to the caller, which logs it and keeps the result queued.
    """

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> T:
        for attempt in range(attempts):
            try:
                return fn(*args, **kwargs)
            except peewee.OperationalError as exc:
                if "locked" not in str(exc).lower() or attempt == attempts - 1:
                    raise
                delay = min(2.0, 0.05 * 2**attempt) * (0.5 + random.random())
                log.warning("database is locked; retrying in %.2fs", delay)
                time.sleep(delay)
        raise AssertionError("unreachable")

    return wrapper


def exclude_writers(table: str) -> None:
    """Inside a write transaction: no other transaction writes *table* until it ends.

    For a rule over a whole table ("only the first account"), which two
    transactions each checking it before writing would both pass. SQLite's
    write transaction (``write_tx``) already excludes every other writer;
    PostgreSQL takes a lock on the table that readers pass.
    """
    if not is_sqlite():
        database.execute_sql(f'LOCK TABLE "{table}" IN SHARE ROW EXCLUSIVE MODE')


Q = TypeVar("Q", bound=peewee.Query)


def locked(query: Q, *order_by: Any, **for_update: Any) -> Q:
    """*query*, locking the rows it reads until the transaction ends (``FOR UPDATE``).

    SQLite's write transaction (``write_tx``: BEGIN IMMEDIATE) already admits
    one writer at a time, so there the query is left as it is. *order_by*
    is the order the rows are locked in, where that matters (PostgreSQL);
    *for_update* goes to peewee's ``for_update`` (``of``, ``skip_locked``).
    """
    if is_sqlite():
        return query
    if order_by:
        query = query.order_by(*order_by)
    return query.for_update(**for_update)
