"""A database's schema as plain data, from its catalog, to compare two databases.

``describe(db)`` gives, per table: its columns (type, nullability, primary
key, whether the key comes from a sequence or AUTOINCREMENT), its indexes
(columns, uniqueness, partial predicate) and its constraints (foreign keys
with their ON DELETE action; on PostgreSQL also UNIQUE and CHECK).
Server-side defaults are left out: a migration may need a
DEFAULT to fill existing rows (ADD COLUMN ... NOT NULL DEFAULT 0) that the
models, which set values in Python, do not declare.
"""

from __future__ import annotations

import re
from typing import Any

import peewee

# Bookkeeping tables, not part of the models' schema.
IGNORED = {"schema_migrations", "sqlite_sequence"}


def describe(db: peewee.Database) -> dict[str, dict[str, Any]]:
    if isinstance(db, peewee.SqliteDatabase):
        return _sqlite(db)
    return _postgresql(db)


def _sqlite(db: peewee.Database) -> dict[str, dict[str, Any]]:
    rows = db.execute_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    tables = {}
    for table, sql in rows:
        if table in IGNORED:
            continue
        autoincrement = "AUTOINCREMENT" in sql.upper()
        columns = {
            name: {
                "type": type_.upper(),
                "not_null": bool(notnull) or bool(pk),
                "primary_key": pk,
                "generated": "autoincrement" if autoincrement and pk else None,
            }
            for _cid, name, type_, notnull, _default, pk in db.execute_sql(
                f'PRAGMA table_info("{table}")'
            )
        }
        indexes = {}
        for _seq, name, unique, _origin, partial in db.execute_sql(
            f'PRAGMA index_list("{table}")'
        ).fetchall():
            cols = [r[2] for r in db.execute_sql(f'PRAGMA index_info("{name}")')]
            where = None
            if partial:
                (index_sql,) = db.execute_sql(
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
                ).fetchone()
                where = _predicate(index_sql.split(" WHERE ", 1)[1])
            indexes[name] = {"columns": cols, "unique": bool(unique), "where": where}
        constraints = sorted(
            (src, parent, dest, on_delete)
            for _id, _seq, parent, src, dest, _on_update, on_delete, _match in db.execute_sql(
                f'PRAGMA foreign_key_list("{table}")'
            )
        )
        tables[table] = {"columns": columns, "indexes": indexes, "constraints": constraints}
    return tables


def _predicate(text: str) -> str:
    """A partial index's WHERE, written either way (quoted, parenthesised or not)."""
    return " ".join(re.sub(r'["()]', " ", text).lower().split())


def _postgresql(db: peewee.Database) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    names = db.execute_sql(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
    ).fetchall()
    for (table,) in names:
        if table not in IGNORED:
            tables[table] = {"columns": {}, "indexes": {}, "constraints": []}
    primary = {
        (table, column)
        for table, column in db.execute_sql(
            "SELECT tc.table_name, kcu.column_name "
            "FROM information_schema.table_constraints tc "
            "JOIN information_schema.key_column_usage kcu "
            "ON kcu.constraint_name = tc.constraint_name "
            "AND kcu.table_schema = tc.table_schema "
            "WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema()"
        )
    }
    columns = db.execute_sql(
        "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, "
        "column_default, is_identity FROM information_schema.columns "
        "WHERE table_schema = current_schema()"
    )
    for table, name, type_, length, nullable, default, identity in columns:
        if table not in tables:
            continue
        generated = None
        if identity == "YES":
            generated = "identity"
        elif default and default.startswith("nextval("):
            generated = "sequence"
        tables[table]["columns"][name] = {
            "type": f"{type_}({length})" if length else type_,
            "not_null": nullable == "NO",
            "primary_key": (table, name) in primary,
            "generated": generated,
        }
    (schema,) = db.execute_sql("SELECT current_schema()").fetchone()
    for table, name, definition in db.execute_sql(
        "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
    ):
        if table in tables:
            # The definition names the table with its schema; the rest does not.
            tables[table]["indexes"][name] = definition.replace(f" ON {schema}.", " ON ")
    for table, name, definition in db.execute_sql(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE connamespace = current_schema()::regnamespace AND contype IN ('f', 'u', 'c')"
    ):
        if table in tables:
            tables[table]["constraints"].append((name, definition))
    for table in tables.values():
        table["constraints"].sort()
    return tables
