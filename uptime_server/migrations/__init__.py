"""Numbered schema migrations, applied in order and recorded.

Each module ``NNNN_name.py`` here has ``up(db)``. ``migrate()`` applies the
ones not yet recorded in ``schema_migrations``, each in its own transaction,
under a lock so two daemons starting together do not race (an advisory lock
on PostgreSQL, BEGIN IMMEDIATE on SQLite).

Policy: 0001 is the v0.1.0 schema. Once a release ships, a schema change is a
new numbered module, never an edit of an applied one.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from datetime import UTC, datetime

import peewee

from uptime_server import db as dbmod

log = logging.getLogger(__name__)

_LOCK_KEY = 0x757074696D65  # "uptime"


def available() -> list[tuple[int, str]]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        head, _, _ = info.name.partition("_")
        if head.isdigit():
            found.append((int(head), info.name))
    return sorted(found)


def applied(database: peewee.Database) -> set[int]:
    _ensure_table(database)
    cursor = database.execute_sql("SELECT version FROM schema_migrations")
    return {row[0] for row in cursor.fetchall()}


def migrate(database: peewee.Database | None = None) -> list[str]:
    """Apply pending migrations; return the names applied."""
    database = database or dbmod.database.obj
    _ensure_table(database)
    done: list[str] = []
    with _lock(database):
        have = applied(database)
        for version, name in available():
            if version in have:
                continue
            module = importlib.import_module(f"{__name__}.{name}")
            with database.atomic():
                module.up(database)
                p = database.param
                database.execute_sql(
                    "INSERT INTO schema_migrations (version, name, applied_at) "
                    f"VALUES ({p}, {p}, {p})",
                    (version, name, datetime.now(UTC).replace(tzinfo=None).isoformat(" ")),
                )
            log.info("applied migration %s", name)
            done.append(name)
    return done


def _ensure_table(database: peewee.Database) -> None:
    database.execute_sql(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at VARCHAR(40) NOT NULL)"
    )


class _lock:
    def __init__(self, database: peewee.Database) -> None:
        self.database = database
        self.pg = isinstance(database, peewee.PostgresqlDatabase)

    def __enter__(self) -> None:
        if self.pg:
            self.database.execute_sql("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        else:
            # One IMMEDIATE transaction around the whole run; each migration
            # nests inside it as a savepoint.
            self.tx = self.database.atomic("IMMEDIATE")
            self.tx.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.pg:
            self.database.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
        else:
            self.tx.__exit__(*exc)
