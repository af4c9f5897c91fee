"""Prepared statements: a query's SQL text built once per shape, then reused."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee

from uptime_server.db.connection import database

Arg = int | str | datetime
PreparedArg = Arg | list[int] | list[str] | tuple[int, ...] | tuple[str, ...]


class Prepared:
    """A hot SELECT whose SQL text is built once per database, then reused.

    peewee builds a statement's text anew on every execution, which costs
    more than SQLite takes to run a primary-key lookup. ``Prepared(build)``
    calls ``build`` once per bound database with stand-ins for its
    arguments, keeps the text and where each stand-in went among the
    parameters, and from then on sends that text with the real arguments;
    rows come back as the query built them (models, joins, ``.tuples()``).

    An argument may be a list (of ints or strings, for an ``IN``): it is
    padded to a size class (``size_class``), so the text is built once per
    database and size class; at most ``MAX_SHAPES`` texts are kept.

    Arguments must reach the SQL unchanged: ints and strings compared with
    integer, key and text columns, and datetimes compared with UTC columns
    (``models.UTCDateTimeField``: sent as naive UTC, as that field sends
    them). A stand-in a field would convert otherwise is not found among the
    parameters, and preparing fails loudly.
    """

    _INT_BASE = -(2**62)  # stand-ins no real id or argument takes
    MAX_SHAPES = 256

    def __init__(self, build: Callable[..., peewee.Query]) -> None:
        self.build = build
        # id(database), with the list lengths when an argument is a list -> its text
        self._prepared: dict[int | tuple[int, ...], _Text] = {}

    def first(self, *args: PreparedArg) -> object | None:
        """The first row of the query for *args*, or None."""
        return next(iter(self.rows(*args)), None)

    def rows(self, *args: PreparedArg) -> list[Any]:
        """The rows of the query for *args* (a list of what the query yields).

        An argument may be a list (or tuple) of ints or strings, for an
        ``IN`` list only: it is padded to a size class (``size_class``) by
        repeating its last value, which an ``IN`` list does not mind, and the
        text is built once per database and size class (a few dozen texts per
        query, however the batches vary).
        """
        entry, cursor = self._execute(args)
        if entry.read is None:
            entry.read = _reader(entry.query, cursor)
        return entry.read(cursor)

    def execute(self, *args: PreparedArg) -> int:
        """Run a prepared UPDATE or DELETE for *args*; the number of rows it changed."""
        return self._execute(args)[1].rowcount

    def _execute(self, args: tuple[PreparedArg, ...]) -> tuple[_Text, Any]:
        db = database.obj
        if any(isinstance(a, list | tuple) for a in args):
            args = tuple(_padded(a) if isinstance(a, list | tuple) else a for a in args)
            shape: Any = (id(db), *(len(a) if isinstance(a, list | tuple) else -1 for a in args))
        else:
            shape = id(db)  # the common case: single values, one text per database
        entry = self._prepared.get(shape)
        if entry is None or entry.db is not db:
            if len(self._prepared) >= self.MAX_SHAPES:
                self._prepared.clear()
            entry = self._prepared[shape] = _Text(db, *self._prepare(db, args))
        flat = [_flat(a) for a in args]
        params = [flat[s.index][s.item] if isinstance(s, _Slot) else s for s in entry.slots]
        return entry, db.execute_sql(entry.sql, params)

    def _prepare(
        self, db: peewee.Database, args: tuple[PreparedArg, ...]
    ) -> tuple[peewee.Query, str, list[object]]:
        counter = iter(range(1, 1 << 30))
        stand_ins = [
            [_stand_in(next(counter), v) for v in a]
            if isinstance(a, list | tuple)
            else _stand_in(next(counter), a)
            for a in args
        ]
        query = self.build(*stand_ins)
        sql, params = db.get_sql_context().sql(query).query()
        where = {}
        for i, stand_in in enumerate(stand_ins):
            for item, value in enumerate(stand_in if isinstance(stand_in, list) else [stand_in]):
                where[value] = _Slot(i, item)
        slots = [where.get(p, p) if _hashable(p) else p for p in params]
        used = {(s.index, s.item) for s in slots if isinstance(s, _Slot)}
        if used != {(s.index, s.item) for s in where.values()}:
            raise ValueError("Prepared: some arguments were converted or unused")
        return query, sql, slots


class _Text:
    """One prepared text of a ``Prepared`` query: its SQL, where each argument goes
    among the parameters, and how its rows are read (worked out on its first run)."""

    __slots__ = ("db", "query", "sql", "slots", "read")

    def __init__(
        self, db: peewee.Database, query: peewee.Query, sql: str, slots: list[Any]
    ) -> None:
        self.db = db
        self.query = query
        self.sql = sql
        self.slots = slots
        self.read: _Reader | None = None


class _Reader:
    """Reads the rows of one prepared text from its cursor.

    A cursor wrapper works out from the columns which converter and which
    model attribute each takes: the same each time for one text, and dearer
    than the query for a row or two. The first run works it out; later runs
    read with it. Dicts and tuples are built here straight from
    ``fetchall()``, without a wrapper or four Python calls per row; models
    (and named tuples) through a fresh wrapper given the layout, as peewee
    builds them.
    """

    __slots__ = ("build", "layout", "query")

    def __init__(self, query: peewee.Query, wrapper: Any) -> None:
        self.query = query
        self.layout: dict[str, Any] = {}  # the wrapper's, for the rows built through one
        kind = type(wrapper)  # exact types: a subclass (named tuples) builds its own rows
        self.build: Callable[[list[tuple[Any, ...]]], list[Any]] | None = None  # rows -> results
        if kind is peewee.ModelDictCursorWrapper:
            self.build = functools.partial(_dict_rows, *_columns(wrapper))
        elif kind is peewee.ModelTupleCursorWrapper:
            converters = wrapper.converters if wrapper.convert else None
            self.build = functools.partial(_tuple_rows, converters)
        else:
            self.layout = {k: v for k, v in wrapper.__dict__.items() if k not in _PER_EXECUTION}

    def __call__(self, cursor: Any) -> list[Any]:
        if self.build is not None:
            return self.build(cursor.fetchall())
        wrapper = self.query._get_cursor_wrapper(cursor)
        wrapper.__dict__.update(self.layout)
        return list(wrapper)


def _reader(query: peewee.Query, cursor: Any) -> _Reader:
    """The reader of *query*'s rows, worked out from the first cursor of its text."""
    wrapper = query._get_cursor_wrapper(cursor)
    wrapper.initialize()
    wrapper.initialized = True
    _drop_plain_converters(wrapper)
    return _Reader(query, wrapper)


# What a cursor wrapper holds of one execution; the rest is its layout.
_PER_EXECUTION = frozenset({"cursor", "count", "index", "populated", "row_cache"})


def _drop_plain_converters(wrapper: Any) -> None:
    """Leave integer and text columns of a ``.dicts()`` or ``.tuples()`` query unconverted.

    peewee calls each such field's ``python_value`` on every value (``int(v)``,
    ``str(v)``); sqlite3 and psycopg already return an ``int`` for an integer
    column and a ``str`` for a text one, so the call changes nothing. A list
    page of 100 monitors made ~1,200 of these calls. Fields with their own
    conversion (booleans, times, JSON, subclasses) keep it.
    """
    if not isinstance(wrapper, peewee.ModelDictCursorWrapper | peewee.ModelTupleCursorWrapper):
        return
    converters, select = list(wrapper.converters), wrapper.select
    for i in list(wrapper.convert):
        # Only a column that is the field itself: an expression peewee maps to
        # a field by its name (a SUM on PostgreSQL: a Decimal) keeps its int().
        field = getattr(converters[i], "__self__", None)
        if i < len(select) and select[i].unwrap() is field and _is_plain(field):
            converters[i] = None
    wrapper.converters = converters
    wrapper.convert = [i for i in range(wrapper.ncols) if converters[i] is not None]
    wrapper.no_convert = [i for i in range(wrapper.ncols) if converters[i] is None]


def _columns(wrapper: Any) -> tuple[list[str], list[tuple[str, int, Any]]]:
    """The row's names, and (name, index, converter) of each column that converts."""
    names, converters = wrapper.unique_columns, wrapper.converters
    return names, [(names[i], i, converters[i]) for i in wrapper.convert]


def _dict_rows(
    names: list[str], convert: list[tuple[str, int, Any]], rows: list[tuple[Any, ...]]
) -> list[dict[str, Any]]:
    """What a ``ModelDictCursorWrapper`` gives for *rows* (its ``process_row``),
    without four Python calls per row: a page of 100 rows is read in one go."""
    out = [dict(zip(names, row, strict=True)) for row in rows]
    if convert:
        for result, row in zip(out, rows, strict=True):
            for name, i, conv in convert:
                result[name] = conv(row[i])
    return out


def _tuple_rows(converters: list[Any] | None, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``ModelTupleCursorWrapper.process_row`` over *rows*, in one go."""
    if converters is None:
        return [tuple(row) for row in rows]
    return [
        tuple([v if c is None else c(v) for c, v in zip(converters, row, strict=True)])
        for row in rows
    ]


def _is_plain(field: object) -> bool:
    if isinstance(field, peewee.ForeignKeyField):
        field = field.rel_field
    if not isinstance(field, peewee.Field):
        return False
    kind = type(field)
    return (
        kind.python_value is peewee.Field.python_value
        and kind.adapt in _PLAIN_ADAPT
        and kind.db_value is peewee.Field.db_value
    )


_PLAIN_ADAPT = (peewee.IntegerField.adapt, peewee.CharField.adapt, peewee.TextField.adapt)


def size_class(n: int) -> int:
    """The length a list argument is padded to: 0-8 as is, then 16, 32, 64, then by 64."""
    if n <= 8:
        return n
    if n <= 64:
        return 1 << (n - 1).bit_length()
    return -(-n // 64) * 64


def _padded(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    items = list(items)
    if items:
        items.extend([items[-1]] * (size_class(len(items)) - len(items)))
    return items


def _flat(arg: PreparedArg) -> list[object]:
    items = arg if isinstance(arg, list | tuple) else [arg]
    return [naive_utc(a) if isinstance(a, datetime) else a for a in items]


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _stand_in(i: int, arg: object) -> object:
    if isinstance(arg, datetime):
        return datetime(1, 1, 1) + timedelta(microseconds=i + 1)  # naive: passes unconverted
    if isinstance(arg, int):
        return Prepared._INT_BASE + i
    return f"\x00prepared {i}\x00"


def naive_utc(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


class _Slot:
    __slots__ = ("index", "item")

    def __init__(self, index: int, item: int = 0) -> None:
        self.index = index  # which argument
        self.item = item  # which element of a list argument (0 for a single value)
