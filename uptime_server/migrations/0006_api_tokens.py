"""0006: ``api_tokens``, bearer tokens for scripts and CI (docs/api.md#api-tokens).

One row per token: its owner (deleted with the user), name, scope, the
SHA-256 of the secret (unique: the lookup key of every bearer request), a
short prefix to recognise it by, and its times. AUTOINCREMENT on SQLite, as
for the other tables whose ids are handed out (a token is revoked and rate
limited by id; a reused id would point at someone else's token).

Numbered 0006 on its own branch; 0004 and 0005 belong to other changes, and
the runner applies whatever numbers it finds, in order.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_COLUMNS = (
    '"user_id" INTEGER NOT NULL, '
    '"name" VARCHAR(100) NOT NULL, '
    '"scope" VARCHAR(8) NOT NULL, '
    '"token_hash" VARCHAR(64) NOT NULL, '
    '"prefix" VARCHAR(16) NOT NULL, '
)
_INDEXES = (
    'CREATE INDEX IF NOT EXISTS "api_tokens_user_id" ON "api_tokens" ("user_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "api_tokens_token_hash" ON "api_tokens" ("token_hash")',
)
_FOREIGN_KEY = 'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'

SQLITE = (
    'CREATE TABLE IF NOT EXISTS "api_tokens" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    f"{_COLUMNS}"
    '"created_at" DATETIME NOT NULL, '
    '"expires_at" DATETIME, '
    '"last_used_at" DATETIME, '
    f"{_FOREIGN_KEY})",
    *_INDEXES,
)
POSTGRESQL = (
    'CREATE TABLE IF NOT EXISTS "api_tokens" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    f"{_COLUMNS}"
    '"created_at" TIMESTAMP NOT NULL, '
    '"expires_at" TIMESTAMP, '
    '"last_used_at" TIMESTAMP, '
    f"{_FOREIGN_KEY})",
    *_INDEXES,
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
