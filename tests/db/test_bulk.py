"""``db.bulk``: many rows through one statement, on both dialects, values bound as parameters.

What ``pg_literals`` wrote as SQL text (quotes, backslashes, ``%``, times,
infinities) now goes as parameters: every value reads back as it was sent,
whatever the server's ``standard_conforming_strings``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from uptime_server import db as dbmod
from uptime_server.db.bulk import Insert, Update, execute_many

STRINGS = [
    "",
    "plain",
    "it's",
    "''",
    "back\\slash",
    "\\'",
    "\\",
    "ends with \\",
    "%s %% %(x)s {} {0} ?",
    "line\nbreak\ttab\r",
    "unicode: é ☃ 𝄞",
    "E'not an escape'",
    "$$dollar$$",
    "-- not a comment",
]
COLUMNS = ("n", "s", "at", "b", "f", "t")


def _rows() -> list[tuple[Any, ...]]:
    at = datetime(2026, 11, 25, 1, 2, 3, 456789)
    rows: list[tuple[Any, ...]] = []
    for n, text in enumerate(STRINGS):
        rows.append((n - 3, text, at + timedelta(seconds=n), n % 2 == 0, n / 7 - 1, None))
    rows.append((2**62, None, None, None, float("inf"), "x"))
    return rows


@pytest.fixture
def pg(pg_url: str) -> Iterator[Any]:
    database = dbmod.bind(pg_url)
    try:
        with database.connection_context():
            yield database
    finally:
        database.close_all()


@pytest.fixture
def lite(tmp_path: Any) -> Iterator[Any]:
    database = dbmod.bind(f"sqlite:///{tmp_path / 'bulk.db'}")
    try:
        with database.connection_context():
            yield database
    finally:
        database.close_all()


def test_statements_are_rendered_from_their_column_lists() -> None:
    insert = Insert("t", ("a", "b"), "ON CONFLICT DO NOTHING", ("id",))
    assert insert.sql == "INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING id"
    update = Update("t", ("a", "b = COALESCE(?, b)", "c = NULL"), ("id", "owner"))
    assert (
        update.sql == "UPDATE t SET a = ?, b = COALESCE(?, b), c = NULL WHERE id = ? AND owner = ?"
    )


@pytest.mark.postgres
@pytest.mark.parametrize("conforming", ["on", "off"])
def test_postgresql_reads_back_every_value_written(pg: Any, conforming: str) -> None:
    pg.execute_sql(f"SET standard_conforming_strings = {conforming}")
    pg.execute_sql("SET escape_string_warning = off")
    pg.execute_sql("SET TIME ZONE 'UTC'")
    pg.execute_sql(
        "CREATE TEMP TABLE literals (n bigint, s text, at timestamp, b boolean, f float8, t text)"
    )
    rows = _rows()
    # An aware time is stored as naive UTC in a timestamp column.
    aware = (-(2**62), "z", datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))))
    rows.append((*aware, False, -0.5, ""))
    returned = Insert("literals", COLUMNS, returning=COLUMNS).run(rows)
    expected = [list(row) for row in rows]
    expected[-1][2] = datetime(2026, 1, 1, 10)
    stored = pg.execute_sql("SELECT n, s, at, b, f, t FROM literals ORDER BY f").fetchall()
    assert [list(r) for r in returned] == expected  # in the order of the rows
    assert [list(r) for r in stored] == sorted(expected, key=lambda r: r[4])


def test_sqlite_reads_back_every_value_written(lite: Any) -> None:
    lite.execute_sql(
        "CREATE TABLE literals (n integer, s text, at text, b integer, f real, t text)"
    )
    rows = _rows()
    Insert("literals", COLUMNS).run(rows)
    stored = lite.execute_sql("SELECT n, s, at, b, f, t FROM literals ORDER BY f").fetchall()
    assert len(stored) == len(rows)
    assert [(n, s, b, f, t) for n, s, _at, b, f, t in stored] == [
        (n, s, None if b is None else int(b), f, t)
        for n, s, _at, b, f, t in sorted(rows, key=lambda r: r[4])
    ]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_update_counts_its_rows_and_ids_come_back_in_order(
    backend: str, request: pytest.FixtureRequest
) -> None:
    database = request.getfixturevalue("lite" if backend == "sqlite" else "pg")
    table = "TABLE pages (id integer" if backend == "sqlite" else "TEMP TABLE pages (id serial"
    database.execute_sql(f"CREATE {table} PRIMARY KEY, s text, o text)")
    with dbmod.write_tx():
        ids = Insert("pages", ("s", "o")).ids([("", "me")] * 10, rows_per_statement=3)
    assert ids == list(range(ids[0], ids[0] + 10))
    rows = [(f"row '{i}' \\ 100% ?", i) for i in ids[:8]]
    assert Update("pages", ("s",), ("id",)).run(rows, count=True) == 8
    got = database.execute_sql("SELECT s FROM pages ORDER BY id").fetchall()
    assert [s for (s,) in got] == [s for s, _ in rows] + ["", ""]
    # A guard that no longer holds changes nothing, and the count says so.
    release = Update("pages", ("o = NULL",), ("id", "o"))
    assert release.run([(ids[0], "me"), (ids[0], "me"), (ids[1], "me")], count=True) == 2
    assert execute_many("UPDATE pages SET s = ? WHERE id = ?", [], count=True) == 0


@pytest.mark.postgres
def test_a_nul_in_a_string_writes_nothing(pg: Any) -> None:
    pg.execute_sql("CREATE TEMP TABLE nul (s text)")
    with pytest.raises(Exception, match="NUL|0x00"), pg.atomic():
        Insert("nul", ("s",)).run([("ok",), ("a\x00b",)])
    assert pg.execute_sql("SELECT count(*) FROM nul").fetchone()[0] == 0
