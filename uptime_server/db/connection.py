"""The database: one proxy bound at start-up, SQLite or PostgreSQL by URL.

SQLite runs in WAL mode with a busy timeout and foreign keys on, and write
transactions start with BEGIN IMMEDIATE so two writers queue on the lock
instead of failing half way with "database is locked" at COMMIT. The writers
of one process queue on a lock of the process first (``write_tx``), which
hands the database over the moment it is free; SQLite's busy handler, which
the writers of other processes still meet, polls it with sleeps.

Both dialects pool their connections (``playhouse.pool``): ``close()`` gives
a connection back to its pool, and the next ``connect()`` of any thread takes
it again, so a request does not pay for opening one (on SQLite: a file open
and five PRAGMAs, which run once per connection, when it is made). A
connection given back inside a transaction is rolled back first; one idle
for ``POOL_STALE_SECONDS`` is closed when next taken.

PostgreSQL is reached through psycopg 3 (peewee's ``PooledPsycopg3Database``):
values travel as parameters bound by the server, never as SQL text.
"""

from __future__ import annotations

import logging
from pathlib import Path
from urllib.parse import unquote, urlsplit

import peewee
from playhouse.pool import PooledSqliteDatabase
from playhouse.postgres_ext import PooledPsycopg3Database

from uptime_server.files import private_sqlite_database

# peewee logs every statement with its parameters at DEBUG: monitor URLs with
# passwords, request headers, Slack webhook tokens, session hashes. Pinned to
# INFO so UPTIME_LOG_LEVEL=DEBUG (a root logger at DEBUG) never records them.
logging.getLogger("peewee").setLevel(logging.INFO)

database = peewee.DatabaseProxy()

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "busy_timeout": 10000,
    "foreign_keys": 1,
    "synchronous": "normal",
    "cache_size": -16000,
}

PG_OPTIONS = "-c max_parallel_workers_per_gather=0"
# Ids, pages and limits are bound as 64-bit integers by both databases.
INT64_MAX = 2**63 - 1
POOL_MAX_CONNECTIONS = 64
POOL_STALE_SECONDS = 300
POOL_WAIT_SECONDS = 30  # for a free connection when all are in use
# PostgreSQL: a connection attempt to a server that does not answer (a host
# gone in a failover) gives up after this, and a connection whose server
# vanished without closing it is found dead by TCP keepalives within about
# idle + interval × count seconds, not the kernel's two hours.
PG_CONNECT_TIMEOUT = 5
PG_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}


def connect_url(url: str) -> peewee.Database:
    """Build (not open) a database for ``sqlite:///path`` or ``postgresql://…``."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = url[len("sqlite:///") :]
        if path != ":memory:":
            private_sqlite_database(Path(path))
        return PooledSqliteDatabase(
            path,
            pragmas=SQLITE_PRAGMAS,
            check_same_thread=False,  # a pooled connection serves any thread, one at a time
            max_connections=POOL_MAX_CONNECTIONS,
            stale_timeout=POOL_STALE_SECONDS,
            timeout=POOL_WAIT_SECONDS,
        )
    if parts.scheme in {"postgresql", "postgres"}:
        return PooledPsycopg3Database(
            unquote(parts.path.lstrip("/")) or "postgres",
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            host=parts.hostname or None,
            port=parts.port or 5432,
            max_connections=POOL_MAX_CONNECTIONS,
            stale_timeout=POOL_STALE_SECONDS,
            timeout=POOL_WAIT_SECONDS,
            # Every query here is a short index scan; once statistics exist the
            # planner likes parallel workers for the roll-up UNION ALLs, whose
            # start-up costs more than the scan (bench/README.md).
            options=PG_OPTIONS,
            connect_timeout=PG_CONNECT_TIMEOUT,
            **PG_KEEPALIVES,
        )
    raise ValueError(f"unsupported database URL scheme: {parts.scheme}")


def bind(url: str) -> peewee.Database:
    """Point the global proxy at the database behind *url* and return it."""
    db = connect_url(url)
    database.initialize(db)
    return db


def is_sqlite() -> bool:
    return isinstance(database.obj, peewee.SqliteDatabase)
