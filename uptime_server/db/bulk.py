"""Many-row writes: one statement, rendered from one column list, run for many rows.

``Insert`` and ``Update`` name a table and its columns once and render the
statement for the bound dialect: ``?`` placeholders on SQLite, ``%s`` on
PostgreSQL. ``run`` sends that one statement with every row: SQLite loops
over the rows in C (``executemany``); psycopg 3's ``executemany`` sends them
pipelined, one round trip for the batch, each row bound by the server as
parameters. No value is ever written into SQL text, on either dialect.

``execute_many`` does the same for a statement written out in a ``*_sql``
module (one whose SET or WHERE is more than ``column = ?``).

Rows go in the order given, one statement each, so rows locked by them are
locked in that order: callers sort their rows into their lock order first.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

import peewee

from uptime_server.db.connection import database, is_sqlite

Row = Sequence[object]

# SQLite: parameters per statement of a multi-row INSERT (its limit is 32766).
_SQLITE_MAX_PARAMS = 32000


def _dialect(sql: str) -> str:
    """*sql*, written with ``?`` placeholders, as the bound database takes it."""
    if is_sqlite():
        return sql
    return sql.replace("%", "%%").replace("?", "%s")


def execute_many(sql: str, rows: Sequence[Row], *, count: bool = False) -> int | None:
    """Run *sql* (``?`` placeholders) once per row of *rows* on the current connection.

    Returns the number of rows the statements changed when *count*, else None.
    """
    if not rows:
        return 0 if count else None
    cursor = database.cursor()
    cursor.executemany(_dialect(sql), rows)
    return cursor.rowcount if count else None


@dataclass(frozen=True)
class Insert:
    """``INSERT INTO table (columns) VALUES (?, …) [conflict] [RETURNING …]``.

    *conflict* is the ``ON CONFLICT`` clause, if any; *returning* the columns
    each inserted row gives back (``run`` returns them, in the order of the
    rows; a row the conflict clause skipped gives nothing).
    """

    table: str
    columns: tuple[str, ...]
    conflict: str = ""
    returning: tuple[str, ...] = ()
    sql: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sql = (
            f"INSERT INTO {self.table} ({', '.join(self.columns)}) "
            f"VALUES ({', '.join(['?'] * len(self.columns))})"
        )
        if self.conflict:
            sql += " " + self.conflict
        if self.returning:
            sql += " RETURNING " + ", ".join(self.returning)
        object.__setattr__(self, "sql", sql)

    def run(self, rows: Sequence[Row]) -> list[tuple[object, ...]]:
        """Insert *rows* (values in ``columns`` order); what ``returning`` gave."""
        if not rows:
            return []
        if not self.returning:
            execute_many(self.sql, rows)
            return []
        cursor = database.cursor()
        if is_sqlite():
            # sqlite3's executemany gives no rows back: one statement per row.
            returned = []
            for row in rows:
                returned.extend(cursor.execute(self.sql, row).fetchall())
            return returned
        cursor.executemany(_dialect(self.sql), rows, returning=True)
        returned = []
        while True:
            returned.extend(cursor.fetchall())
            if not cursor.nextset():
                return returned

    def ids(self, rows: Sequence[Row], *, rows_per_statement: int | None = None) -> list[int]:
        """Insert *rows* and return each one's integer primary key, in order.

        SQLite: one multi-row INSERT per *rows_per_statement* rows (as many
        as its parameter limit allows when None), which under the write lock
        (``write_tx``) takes consecutive rowids, the last one reported; call
        it inside a write transaction. PostgreSQL: ``RETURNING id`` of each row.
        """
        if not rows:
            return []
        if not is_sqlite():
            returning = _returning_id(self)
            return [row_id for (row_id,) in returning.run(rows)]  # type: ignore[misc]
        width = len(self.columns)
        placeholders = "(" + ", ".join(["?"] * width) + ")"
        head = f"INSERT INTO {self.table} ({', '.join(self.columns)}) VALUES "
        ids: list[int] = []
        per_statement = rows_per_statement or max(1, _SQLITE_MAX_PARAMS // width)
        for chunk in peewee.chunked(rows, per_statement):
            sql = head + ", ".join([placeholders] * len(chunk))
            params = [value for row in chunk for value in row]
            last = database.execute_sql(sql, params).lastrowid
            ids.extend(range(last - len(chunk) + 1, last + 1))
        return ids


@functools.lru_cache(maxsize=64)
def _returning_id(insert: Insert) -> Insert:
    return Insert(insert.table, insert.columns, insert.conflict, ("id",))


@dataclass(frozen=True)
class Update:
    """``UPDATE table SET col = ?, … WHERE key = ? AND …``, run once per row.

    Each of *set* is a column (set to its parameter) or a whole assignment
    written with ``?`` (``"next_check_at = COALESCE(?, next_check_at)"``,
    ``"lease_owner = NULL"``); each of *where* a column compared with its
    parameter. A row holds the parameters of *set*, then those of *where*.
    """

    table: str
    set: tuple[str, ...]
    where: tuple[str, ...]
    sql: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        assignments = [s if "=" in s else f"{s} = ?" for s in self.set]
        conditions = [f"{c} = ?" for c in self.where]
        sql = f"UPDATE {self.table} SET {', '.join(assignments)} WHERE {' AND '.join(conditions)}"
        object.__setattr__(self, "sql", sql)

    def run(self, rows: Sequence[Row], *, count: bool = False) -> int | None:
        """Update one row per parameter row; the rows changed when *count*."""
        return execute_many(self.sql, rows, count=count)
