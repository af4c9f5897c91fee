"""Connection settings the daemon relies on, on each backend."""

from __future__ import annotations

from typing import Any

import pytest

from uptime_server import db as dbmod


def test_it_opens_sqlite_in_wal_with_foreign_keys(tmp_path: Any) -> None:
    database = dbmod.connect_url(f"sqlite:///{tmp_path / 'nested' / 'uptime.db'}")
    with database.connection_context():
        assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert database.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 10000


@pytest.mark.postgres
def test_it_turns_off_parallel_workers_on_postgresql(pg_url: str) -> None:
    database = dbmod.connect_url(pg_url)
    try:
        with database.connection_context():
            value = database.execute_sql("SHOW max_parallel_workers_per_gather").fetchone()[0]
        assert value == "0"
    finally:
        database.close_all()
