"""Many-row writes: one statement run for many rows, on either dialect."""

from __future__ import annotations

import peewee

from uptime_server.db.connection import database, is_sqlite
from uptime_server.pg_literals import RowRenderer, split_statement

VALUES_PAGE = 1000  # rows per statement of ``execute_values``


def execute_many(sql: str, rows: list[tuple[object, ...]], *, count: bool = False) -> int | None:
    """Run one statement for many parameter rows on the current connection.

    *sql* uses ``?`` placeholders (rewritten for PostgreSQL). Much cheaper per
    row than one peewee query each: SQLite loops in C; on PostgreSQL,
    psycopg2's ``execute_batch`` sends pages of statements per round trip,
    unless *count* asks for the number of rows changed, which only a plain
    ``executemany`` reports. Returns that number when *count*, else None.
    """
    if not rows:
        return 0 if count else None
    cursor = database.cursor()
    if is_sqlite():
        cursor.executemany(sql, rows)
        return cursor.rowcount if count else None
    sql = sql.replace("?", "%s")
    if count:
        cursor.executemany(sql, rows)
        return cursor.rowcount
    from psycopg2.extras import execute_batch

    execute_batch(cursor, sql, rows, page_size=200)
    return None


def execute_values(
    sql: str, rows: list[tuple[object, ...]], template: str, *, fetch: bool = False
) -> tuple[int, list[tuple[object, ...]]]:
    """PostgreSQL: one statement per page of rows (as psycopg2's ``execute_values``).

    *sql* holds one ``%s`` where the ``VALUES`` list goes (an INSERT's, or the
    ``FROM (VALUES %s) AS v(...)`` of an UPDATE), *template* one row of it;
    give casts there, since a column that is NULL in every row is typed text.
    One round trip and one statement for the server to plan per page, where
    ``execute_many`` sends one statement per row. The rows are written as
    text by ``pg_literals.RowRenderer`` (a third of ``mogrify``'s CPU), which
    leaves the values it does not know to psycopg2. Returns the rows changed
    (summed over the pages) and, when *fetch*, what a RETURNING gave.
    """
    from psycopg2.extensions import encodings

    changed, returned = 0, []
    cursor = database.cursor()

    def fallback(value: object) -> str:  # a value RowRenderer leaves to psycopg2 (rare)
        return cursor.mogrify("%s", (value,)).decode(encodings[cursor.connection.encoding])

    render = RowRenderer(template, fallback)
    before, after = split_statement(sql)
    for page in peewee.chunked(rows, VALUES_PAGE):
        cursor.execute(before + ",".join([render(row) for row in page]) + after)
        changed += cursor.rowcount
        if fetch:
            returned.extend(cursor.fetchall())
    return changed, returned
