"""The only place that knows how SQL reaches a database.

- ``connection``: the proxy bound at start-up, SQLite or PostgreSQL by URL,
  pooled; ``is_sqlite`` for the few dialect choices left to callers.
- ``transactions``: ``write_tx`` (BEGIN IMMEDIATE on SQLite, its writers
  queued in this process first) and ``retry_locked``.
- ``prepared``: ``Prepared``, a hot query's SQL text built once per shape.
- ``bulk``: many-row writes, one column list rendering both dialects.
- ``outages``: which errors mean the database went away, and what to do then.

There are three ways in: the peewee builder, ``prepared`` and ``bulk``; SQL
text outside this package lives only in modules named ``*_sql.py``.
"""

from __future__ import annotations

from uptime_server.db.bulk import execute_many
from uptime_server.db.connection import (
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
    _WRITERS,
    exclude_writers,
    locked,
    retry_locked,
    write_tx,
)

__all__ = [
    "PG_CONNECT_TIMEOUT",
    "PG_KEEPALIVES",
    "PG_OPTIONS",
    "POOL_MAX_CONNECTIONS",
    "POOL_STALE_SECONDS",
    "POOL_WAIT_SECONDS",
    "SQLITE_PRAGMAS",
    "_WRITERS",
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
