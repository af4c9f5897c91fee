"""Blank databases of the test's backend, to migrate or to build from the models.

On PostgreSQL each is a schema of its own in the session's scratch database
(``search_path`` set on its connection): creating a schema is much cheaper
than creating a database.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import peewee
import pytest

from uptime_server import db
from uptime_server.models import MODELS


@pytest.fixture
def blank_db(
    backend: str, tmp_path: Any, request: pytest.FixtureRequest
) -> Iterator[Callable[[], peewee.Database]]:
    """A factory of new, empty, connected databases (SQLite files or PostgreSQL schemas)."""
    made: list[tuple[peewee.Database, str | None]] = []

    def make() -> peewee.Database:
        if backend == "sqlite":
            database = db.connect_url(f"sqlite:///{tmp_path / f'blank{len(made)}.db'}")
            schema = None
        else:
            schema = f"mig_{uuid.uuid4().hex[:12]}"
            database = _pg_in_schema(request.getfixturevalue("pg_url"), schema)
        database.connect()
        if schema is not None:
            database.execute_sql(f'CREATE SCHEMA "{schema}"')
        made.append((database, schema))
        return database

    try:
        yield make
    finally:
        for database, schema in made:
            if schema is not None:
                database.execute_sql(f'DROP SCHEMA "{schema}" CASCADE')
            database.close()


def _pg_in_schema(url: str, schema: str) -> peewee.Database:
    parts = urlsplit(url)
    return peewee.PostgresqlDatabase(
        unquote(parts.path.lstrip("/")),
        user=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        host=parts.hostname,
        port=parts.port or 5432,
        options=f"-c search_path={schema}",
    )


def build_from_models(database: peewee.Database) -> peewee.Database:
    """What the models declare: their tables made by peewee's create_tables."""
    with database.bind_ctx(MODELS):
        database.create_tables(MODELS)
    return database
