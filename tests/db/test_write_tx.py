"""``db.write_tx`` on SQLite: the writers of one process take turns on a lock of the process.

Threads here stand for the database worker's record and claim threads, or
the API's request threads: one writer inside, the next waiting on
``db.transactions._WRITERS`` (woken when it is released), not in SQLite's busy handler.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from uptime_server import db as dbmod
from uptime_server.db import transactions
from uptime_server.models import User

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
WAIT = 10.0


def add_user(email: str) -> None:
    with dbmod.database.connection_context(), dbmod.write_tx():
        User.create(email=email, name=email, created_at=NOW)


@pytest.fixture
def sqlite_db(db: Any) -> Any:
    if not dbmod.is_sqlite():
        pytest.skip("the writers' lock is SQLite's")
    return db


class Holder(threading.Thread):
    """A writer that stays inside its transaction until told to commit."""

    def __init__(self, email: str) -> None:
        super().__init__(daemon=True)
        self.email = email
        self.inside = threading.Event()
        self.commit = threading.Event()

    def run(self) -> None:
        with dbmod.database.connection_context(), dbmod.write_tx():
            User.create(email=self.email, name=self.email, created_at=NOW)
            self.inside.set()
            assert self.commit.wait(WAIT)


def test_a_second_writer_waits_for_the_first_to_commit_then_sees_its_row(sqlite_db: Any) -> None:
    first = Holder("first@example.com")
    first.start()
    assert first.inside.wait(WAIT)
    seen: list[list[str]] = []

    def second() -> None:
        with dbmod.database.connection_context(), dbmod.write_tx():
            seen.append([u.email for u in User.select().order_by(User.id)])
            User.create(email="second@example.com", name="second", created_at=NOW)

    waiting = threading.Thread(target=second, daemon=True)
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive() and seen == [], "the second writer got in beside the first"
    first.commit.set()
    first.join(WAIT)
    waiting.join(WAIT)
    assert not waiting.is_alive()
    assert seen == [["first@example.com"]]
    with dbmod.database.connection_context():
        emails = [u.email for u in User.select().order_by(User.id)]
    assert emails == ["first@example.com", "second@example.com"]


def test_the_lock_is_held_inside_only_and_nested_transactions_keep_it(sqlite_db: Any) -> None:
    assert transactions._WRITERS.acquire(blocking=False)  # free before
    transactions._WRITERS.release()
    with dbmod.database.connection_context(), dbmod.write_tx():
        User.create(email="outer@example.com", name="outer", created_at=NOW)
        with dbmod.write_tx():  # a savepoint, same thread: no deadlock
            User.create(email="inner@example.com", name="inner", created_at=NOW)
        assert not _free_for_another_thread()
    assert _free_for_another_thread()
    with dbmod.database.connection_context():
        assert User.select().count() == 2


def test_a_failing_transaction_rolls_back_and_frees_the_lock(sqlite_db: Any) -> None:
    with pytest.raises(RuntimeError), dbmod.database.connection_context(), dbmod.write_tx():
        User.create(email="lost@example.com", name="lost", created_at=NOW)
        raise RuntimeError("boom")
    assert _free_for_another_thread()
    add_user("kept@example.com")
    with dbmod.database.connection_context():
        assert [u.email for u in User.select()] == ["kept@example.com"]


def test_a_writer_stops_waiting_for_the_lock_after_the_busy_timeout(
    sqlite_db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock somebody forgot to give back costs the busy timeout, as SQLite's would, not all."""
    monkeypatch.setitem(dbmod.SQLITE_PRAGMAS, "busy_timeout", 50)
    taken, done = threading.Event(), threading.Event()

    def hog() -> None:
        with transactions._WRITERS:  # held without a transaction: SQLite's lock is free
            taken.set()
            done.wait(WAIT)

    hogger = threading.Thread(target=hog, daemon=True)
    hogger.start()
    assert taken.wait(WAIT)
    try:
        add_user("through@example.com")
    finally:
        done.set()
        hogger.join(WAIT)
    with dbmod.database.connection_context():
        assert [u.email for u in User.select()] == ["through@example.com"]
    assert _free_for_another_thread()


def test_postgresql_transactions_take_no_process_lock(db: Any) -> None:
    if dbmod.is_sqlite():
        pytest.skip("PostgreSQL's writers lock rows, not the database")
    with dbmod.database.connection_context(), dbmod.write_tx():
        User.create(email="pg@example.com", name="pg", created_at=NOW)
        assert _free_for_another_thread()


def _free_for_another_thread() -> bool:
    got: list[bool] = []

    def probe() -> None:
        free = transactions._WRITERS.acquire(blocking=False)
        if free:
            transactions._WRITERS.release()
        got.append(free)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(WAIT)
    return got[0]
