"""Numbered schema migrations, applied in order and recorded.

Each module ``NNNN_name.py`` here has ``up(db)``, which runs explicit DDL for
both dialects (``run_ddl``) and never reads the models: a shipped migration
must make the same schema whatever the models say later. ``migrate()``
applies the ones not yet recorded in ``schema_migrations``, each in its own
transaction, under a lock so two daemons starting together do not race (an
advisory lock on PostgreSQL, BEGIN IMMEDIATE on SQLite).

SQLite changes most things about a table only by rebuilding it (create the
new table, copy the rows, drop the old one, rename). Dropping a table that
others reference would run their ON DELETE CASCADE with foreign keys on, so
on SQLite the run happens with ``foreign_keys`` off, as SQLite's own
procedure for schema changes asks, and ``PRAGMA foreign_key_check`` must
come back empty before it commits.

Policy: 0001 is the v0.1.0 schema. Once a release ships, a schema change is a
new numbered module, never an edit of an applied one (docs/migrations.md).

Speed tricks: none; a migration runs once per database.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Sequence
from datetime import UTC, datetime

import peewee

from uptime_server import db as dbmod

log = logging.getLogger(__name__)

_LOCK_KEY = 0x757074696D65  # "uptime"


class MigrationError(RuntimeError):
    """A migration left the database inconsistent; nothing of the run was kept."""


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


def migrate(database: peewee.Database | None = None, *, until: int | None = None) -> list[str]:
    """Apply pending migrations (up to version *until*, if given); return the names applied."""
    database = database or dbmod.database.obj
    _ensure_table(database)
    done: list[str] = []
    with _lock(database):
        have = applied(database)
        for version, name in available():
            if version in have or (until is not None and version > until):
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
        if done and isinstance(database, peewee.SqliteDatabase):
            _check_foreign_keys(database)
    return done


def run_ddl(database: peewee.Database, *, sqlite: Sequence[str], postgresql: Sequence[str]) -> None:
    """Run the statements written for this database's dialect, in order."""
    is_sqlite = isinstance(database, peewee.SqliteDatabase)
    for statement in sqlite if is_sqlite else postgresql:
        database.execute_sql(statement)


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
            return
        # The pragma is a no-op inside a transaction: set it before BEGIN.
        self.foreign_keys = self.database.execute_sql("PRAGMA foreign_keys").fetchone()[0]
        self.database.execute_sql("PRAGMA foreign_keys = OFF")
        # One IMMEDIATE transaction around the whole run; each migration
        # nests inside it as a savepoint.
        self.tx = self.database.atomic("IMMEDIATE")
        self.tx.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.pg:
            self.database.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
            return
        try:
            self.tx.__exit__(*exc)
        finally:
            self.database.execute_sql(f"PRAGMA foreign_keys = {int(self.foreign_keys)}")


def _check_foreign_keys(database: peewee.Database) -> None:
    """Foreign keys were off while the run changed tables: every row must still have its parent."""
    broken = database.execute_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise MigrationError(f"the migrations left rows without their parent: {broken[:5]}")
