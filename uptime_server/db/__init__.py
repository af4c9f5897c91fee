"""The only place that knows how SQL reaches a database.

- ``connection``: the proxy bound at start-up, SQLite or PostgreSQL (psycopg 3)
  by URL, both pooled; ``is_sqlite`` for the few dialect choices left outside.
- ``transactions``: ``write_tx`` (BEGIN IMMEDIATE on SQLite, its writers queued
  in this process first), ``retry_locked``, and the dialects' locks:
  ``locked`` (FOR UPDATE where it applies), ``exclude_writers`` (a table lock).
- ``prepared``: ``Prepared``, a hot query's SQL text built once per shape.
- ``bulk``: many-row writes, one column list rendering both dialects.
- ``outages``: which errors mean the database went away, and what then.

There are three ways in: the peewee builder, ``prepared`` and ``bulk``. SQL
text outside this package lives only in modules named ``*_sql.py``
(``tests/test_sql_placement.py``). Speed: statement text is built once per
shape, not by peewee per call (``Prepared``); many rows go as one statement
run by the driver's ``executemany`` (SQLite loops in C, psycopg 3 pipelines);
connections are pooled, so a request opens none.
"""

from __future__ import annotations

from uptime_server.db.bulk import execute_many
from uptime_server.db.connection import (
    INT64_MAX,
    PG_CONNECT_TIMEOUT,
    PG_KEEPALIVES,
    PG_OPTIONS,
    POOL_MAX_CONNECTIONS,
    POOL_STALE_SECONDS,
    POOL_WAIT_SECONDS,
    SQLITE_PRAGMAS,
    bind,
    connect_url,
    database,
    is_sqlite,
)
from uptime_server.db.prepared import (
    Prepared,
    PreparedArg,
    naive_utc,
    size_class,
)
from uptime_server.db.transactions import (
    exclude_writers,
    locked,
    retry_locked,
    write_tx,
)

__all__ = [
    "INT64_MAX",
    "PG_CONNECT_TIMEOUT",
    "PG_KEEPALIVES",
    "PG_OPTIONS",
    "POOL_MAX_CONNECTIONS",
    "POOL_STALE_SECONDS",
    "POOL_WAIT_SECONDS",
    "SQLITE_PRAGMAS",
    "Prepared",
    "PreparedArg",
    "bind",
    "connect_url",
    "database",
    "execute_many",
    "exclude_writers",
    "is_sqlite",
    "locked",
    "naive_utc",
    "retry_locked",
    "size_class",
    "write_tx",
]
