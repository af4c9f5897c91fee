"""0011: probe agents over HTTP (docs/agents.md).

``agent_tokens``: one row per agent credential, bound to one location; the
SHA-256 of the secret (unique), a short prefix for listings, and what the
agent last reported (version, degraded, checks per second, lag, last seen).
Revoking deletes the row. AUTOINCREMENT on SQLite: the id names the agent in
its lease owner tokens, so it is never handed out twice.

``agent_batches``: the result batches an agent posted, by the id the agent
gave each, with the answer sent, so a batch posted twice records nothing the
second time and gets the first answer again. Deleted with their token.

``check_runs`` gains ``counted`` (true): false for a run that failed while
its agent's connectivity canary failed, kept in history but counted in no
status, alert or roll-up.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_TOKEN_COLUMNS = (
    '"location" VARCHAR(64) NOT NULL, '
    '"name" VARCHAR(100) NOT NULL, '
    '"token_hash" VARCHAR(64) NOT NULL, '
    '"prefix" VARCHAR(16) NOT NULL, '
    '"version" VARCHAR(64), '
    '"degraded" {bool} NOT NULL DEFAULT {false}, '
    '"checks_per_second" REAL, '
    '"lag_seconds" REAL, '
    '"dropped_results" INTEGER NOT NULL DEFAULT 0, '
)
_BATCH_COLUMNS = (
    '"agent_id" INTEGER NOT NULL, "batch_id" VARCHAR(64) NOT NULL, "response" TEXT NOT NULL, '
)
_BATCH_KEY = 'FOREIGN KEY ("agent_id") REFERENCES "agent_tokens" ("id") ON DELETE CASCADE'
_INDEXES = (
    'CREATE UNIQUE INDEX "agent_tokens_token_hash" ON "agent_tokens" ("token_hash")',
    'CREATE UNIQUE INDEX "agent_batches_agent_id_batch_id" '
    'ON "agent_batches" ("agent_id", "batch_id")',
    'CREATE INDEX "agent_batches_created_at" ON "agent_batches" ("created_at")',
)

SQLITE = (
    'CREATE TABLE "agent_tokens" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    f"{_TOKEN_COLUMNS.format(bool='INTEGER', false='0')}"
    '"created_at" DATETIME NOT NULL, '
    '"last_seen_at" DATETIME)',
    'CREATE TABLE "agent_batches" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    f"{_BATCH_COLUMNS}"
    '"created_at" DATETIME NOT NULL, '
    f"{_BATCH_KEY})",
    'ALTER TABLE "check_runs" ADD COLUMN "counted" INTEGER NOT NULL DEFAULT 1',
    *_INDEXES,
)
POSTGRESQL = (
    'CREATE TABLE "agent_tokens" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    f"{_TOKEN_COLUMNS.format(bool='BOOLEAN', false='FALSE')}"
    '"created_at" TIMESTAMP NOT NULL, '
    '"last_seen_at" TIMESTAMP)',
    'CREATE TABLE "agent_batches" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    f"{_BATCH_COLUMNS}"
    '"created_at" TIMESTAMP NOT NULL, '
    f"{_BATCH_KEY})",
    'ALTER TABLE "check_runs" ADD COLUMN "counted" BOOLEAN NOT NULL DEFAULT TRUE',
    *_INDEXES,
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
