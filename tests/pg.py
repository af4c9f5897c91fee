"""Scratch PostgreSQL databases on the test server, for tests and benchmarks.

The server is the one at ``UPTIME_TEST_PG_URL`` (default: 127.0.0.1:5432);
each scratch database is created beside the database that URL names and
dropped, open connections and all, when its block ends. No pytest here:
``bench/`` uses this without the dev dependencies.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

PG_ADMIN_URL = os.environ.get("UPTIME_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


class Unreachable(Exception):
    """The test server did not take a connection."""


def _admin(timeout: int) -> Any:
    import psycopg

    parts = urlsplit(PG_ADMIN_URL)
    try:
        conn = psycopg.connect(
            dbname=parts.path.lstrip("/"),
            user=parts.username,
            password=parts.password,
            host=parts.hostname,
            port=parts.port or 5432,
            connect_timeout=timeout,
        )
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Unreachable(first) from exc
    conn.autocommit = True  # CREATE/DROP DATABASE cannot run in a transaction
    return conn


def unreachable(timeout: int = 3) -> str | None:
    """Why the test server takes no connection, or None when it does."""
    try:
        _admin(timeout).close()
    except Unreachable as exc:
        return str(exc)
    return None


def where() -> str:
    """The test server's address for messages: host, port and database, no credentials."""
    parts = urlsplit(PG_ADMIN_URL)
    return f"{parts.hostname}:{parts.port or 5432}{parts.path}"


@contextmanager
def scratch_database(prefix: str, *, timeout: int = 5) -> Iterator[str]:
    """The URL of a new, empty database; raises ``Unreachable`` before creating one."""
    admin = _admin(timeout)
    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with admin.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        try:
            yield f"{PG_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
        finally:
            with admin.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.close()
