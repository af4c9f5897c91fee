"""PostgreSQL: the ``VALUES`` rows of a many-row statement, written as SQL text.

psycopg2's ``execute_values`` renders each row with ``cursor.mogrify``, which
makes an adapter object per value: 28 µs for a run row of 15 values, on
every page of every batch the recorder writes (a third of its CPU).
``RowRenderer`` writes the values the recorder and the roll-ups hold (None,
bools, ints, finite floats, strings, naive datetimes) with ``str.format`` in a
third of that time, and hands any other value (an aware datetime, a
``Decimal``, a list, an int subclass, a NaN) to psycopg2 as before, so the
text is what psycopg2 would send, to the byte but for two forms:

- a naive datetime is ``'2026-01-02T03:04:05'::timestamp`` (psycopg2 writes
  the same, with its own cast after it);
- a string with a backslash is an escape string, ``E'a\\\\b'``: it means
  the same whatever the server's ``standard_conforming_strings``. A string
  without one is a plain literal with its quotes doubled, which both
  settings read alike.

A string with a NUL character is refused, as psycopg2 refuses it (PostgreSQL
text cannot hold one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

Fallback = Callable[[Any], str]  # one value as psycopg2 renders it


def _escaped(value: str) -> str:
    """A string with a backslash or a NUL (the rare case)."""
    if "\x00" in value:
        raise ValueError("A string literal cannot contain NUL (0x00) characters.")
    return "E'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def _literal(value: Any, fallback: Fallback) -> str:
    # Exact types only: a subclass (an IntEnum, a str enum, a datetime
    # subclass) goes to psycopg2. Tests in the order the recorder's values
    # come most often; one function, no table of writers (a third less CPU).
    kind = type(value)
    if value is None:
        return "NULL"
    if kind is int:
        # A space before a minus, as psycopg2 writes it: "-%s" never makes
        # "--1", a comment.
        return repr(value) if value >= 0 else " " + repr(value)
    if kind is str:
        if "\\" in value or "\x00" in value:
            return _escaped(value)
        return "'" + value.replace("'", "''") + "'"
    if kind is bool:
        return "true" if value else "false"
    if kind is datetime and value.tzinfo is None:
        # (an aware one: psycopg2 writes the offset and a timestamptz cast)
        return "'" + value.isoformat() + "'::timestamp"
    if kind is float and math.isfinite(value):  # (NaN: psycopg2's 'NaN'::float)
        return repr(value) if value >= 0 else " " + repr(value)
    return fallback(value)


class RowRenderer:
    """One ``VALUES`` row of *template* (psycopg2's: ``%s`` per value, casts
    around them) as text, for the rows of one statement."""

    def __init__(self, template: str, fallback: Fallback) -> None:
        if template.count("%s") != template.count("%"):
            raise ValueError(f"a VALUES template holds only %s placeholders: {template!r}")
        self._format = template.replace("{", "{{").replace("}", "}}").replace("%s", "{}")
        self._width = template.count("%s")
        self._fallback = fallback

    def __call__(self, row: Sequence[Any]) -> str:
        if len(row) != self._width:
            raise IndexError(f"a row of {len(row)} values for {self._width} placeholders")
        fallback = self._fallback
        return self._format.format(*[_literal(value, fallback) for value in row])


def split_statement(sql: str) -> tuple[str, str]:
    """The text before and after the one ``%s`` of *sql* where the rows go,
    ``%%`` read as ``%`` (psycopg2's ``execute_values`` reads it so)."""
    parts = sql.replace("%%", "\0").split("%s")
    if len(parts) != 2 or "%" in sql.replace("%%", "").replace("%s", ""):
        raise ValueError(f"the statement needs one %s where the rows go: {sql!r}")
    before, after = parts
    return before.replace("\0", "%"), after.replace("\0", "%")
