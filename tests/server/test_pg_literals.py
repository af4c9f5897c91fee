"""``pg_literals``: VALUES rows written as SQL text read back as the values they hold."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pytest

from uptime_server import db as dbmod
from uptime_server.pg_literals import RowRenderer, split_statement


class Level(IntEnum):
    HIGH = 3


def _no_fallback(value: Any) -> str:
    raise AssertionError(f"{value!r} should not need psycopg2")


def test_a_row_is_its_template_with_each_value_written_in() -> None:
    render = RowRenderer("(%s::integer, %s, %s::timestamp, %s::boolean, %s)", _no_fallback)
    row = (7, "it's", datetime(2026, 1, 2, 3, 4, 5, 600), True, None)
    assert render(row) == (
        "(7::integer, 'it''s', '2026-01-02T03:04:05.000600'::timestamp::timestamp, "
        "true::boolean, NULL)"
    )
    # A backslash makes an escape string, read alike whatever standard_conforming_strings.
    assert RowRenderer("(%s)", _no_fallback)(["a\\'b"]) == "(E'a\\\\''b')"
    # Minus signs get psycopg2's space ("-%s" never makes a "--" comment).
    assert RowRenderer("(-%s, -%s)", _no_fallback)((-1, -2.5)) == "(- -1, - -2.5)"


def test_values_it_does_not_know_go_to_the_fallback() -> None:
    seen: list[Any] = []

    def fallback(value: Any) -> str:
        seen.append(value)
        return "X"

    aware = datetime(2026, 1, 2, tzinfo=UTC)
    odd = [aware, Decimal("1.5"), [1, 2], Level.HIGH, float("nan"), float("-inf"), b"\x01"]
    assert RowRenderer(", ".join(["%s"] * len(odd)), fallback)(odd) == ", ".join(["X"] * 7)
    assert seen == odd


def test_bad_templates_rows_and_strings_are_refused() -> None:
    with pytest.raises(ValueError, match="only %s"):
        RowRenderer("(%s, %d)", _no_fallback)
    with pytest.raises(IndexError, match="2 values for 3"):
        RowRenderer("(%s, %s, %s)", _no_fallback)((1, 2))
    with pytest.raises(ValueError, match="NUL"):
        RowRenderer("(%s)", _no_fallback)(("a\x00b",))


def test_the_statement_splits_where_the_rows_go() -> None:
    assert split_statement("INSERT INTO t VALUES %s RETURNING id") == (
        "INSERT INTO t VALUES ",
        " RETURNING id",
    )
    assert split_statement("UPDATE t SET a = '100%%' FROM (VALUES %s) v") == (
        "UPDATE t SET a = '100%' FROM (VALUES ",
        ") v",
    )
    for bad in ("SELECT 1", "VALUES %s, %s", "VALUES %s WHERE a LIKE 'x%'"):
        with pytest.raises(ValueError, match="one %s"):
            split_statement(bad)


# -- through PostgreSQL ----------------------------------------------------------

STRINGS = [
    "",
    "plain",
    "it's",
    "''",
    "back\\slash",
    "\\'",
    "\\",
    "ends with \\",
    "%s %% %(x)s {} {0}",
    "line\nbreak\ttab\r",
    "unicode: é ☃ 𝄞",
    "E'not an escape'",
    "$$dollar$$",
    "-- not a comment",
]
TEMPLATE = "(%s::bigint, %s::text, %s::timestamp, %s::boolean, %s::float8, %s::text)"


def _rows() -> list[tuple[Any, ...]]:
    at = datetime(2026, 11, 25, 1, 2, 3, 456789)
    rows: list[tuple[Any, ...]] = []
    for n, text in enumerate(STRINGS):
        rows.append((n - 3, text, at + timedelta(seconds=n), n % 2 == 0, n / 7 - 1, None))
    rows.append((2**62, None, None, None, float("inf"), "x"))  # the fallback's float
    # An aware time goes through psycopg2 (a timestamptz, cast to the column's type).
    rows.append(
        (
            -(2**62),
            "z",
            datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))),
            False,
            -0.5,
            "",
        )
    )
    return rows


@pytest.fixture
def pg(pg_url: str) -> Iterator[Any]:
    database = dbmod.bind(pg_url)
    try:
        with database.connection_context():
            yield database
    finally:
        database.close_all()


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
    changed, returned = dbmod.execute_values(
        "INSERT INTO literals VALUES %s RETURNING n, s, at, b, f, t", rows, TEMPLATE, fetch=True
    )
    assert changed == len(rows)
    expected = [list(row) for row in rows]
    expected[-1][2] = datetime(2026, 1, 1, 10)  # 12:00+02:00, stored as a naive UTC timestamp
    stored = pg.execute_sql("SELECT n, s, at, b, f, t FROM literals ORDER BY f").fetchall()
    assert sorted(map(list, returned), key=lambda r: r[4]) == sorted(expected, key=lambda r: r[4])
    assert [list(r) for r in stored] == sorted(expected, key=lambda r: r[4])


@pytest.mark.postgres
def test_an_update_from_values_counts_its_rows_over_pages(
    pg: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dbmod, "VALUES_PAGE", 3)
    pg.execute_sql("CREATE TEMP TABLE pages (id integer PRIMARY KEY, s text)")
    pg.execute_sql("INSERT INTO pages SELECT g, '' FROM generate_series(1, 10) AS g")
    rows = [(i, f"row '{i}' \\ 100%") for i in range(1, 9)]
    changed, _ = dbmod.execute_values(
        "UPDATE pages AS p SET s = v.s FROM (VALUES %s) AS v(id, s) WHERE p.id = v.id",
        rows,
        "(%s::integer, %s::text)",
    )
    assert changed == 8
    got = pg.execute_sql("SELECT id, s FROM pages ORDER BY id").fetchall()
    assert got == [*rows, (9, ""), (10, "")]


@pytest.mark.postgres
def test_a_nul_in_a_string_writes_nothing(pg: Any) -> None:
    pg.execute_sql("CREATE TEMP TABLE nul (s text)")
    with pytest.raises(ValueError, match="NUL"):
        dbmod.execute_values("INSERT INTO nul VALUES %s", [("ok",), ("a\x00b",)], "(%s)")
    assert pg.execute_sql("SELECT count(*) FROM nul").fetchone()[0] == 0
