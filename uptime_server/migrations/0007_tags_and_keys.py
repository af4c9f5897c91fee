"""0007: monitor tags and the stable key that ``uptime apply`` matches by.

``monitor_tags`` holds one row per (monitor, tag), keyed by both, with an
index on ``tag`` for the list filter; rows go with their monitor. ``monitors``
gains ``key`` (null for existing rows), unique per user; NULLs do not collide
on either database, so monitors without a key are unconstrained.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_TAGS_TABLE = (
    'CREATE TABLE "monitor_tags" ('
    '"monitor_id" INTEGER NOT NULL, '
    '"tag" VARCHAR(32) NOT NULL, '
    'PRIMARY KEY ("monitor_id", "tag"), '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE)'
)
_COMMON = (
    'ALTER TABLE "monitors" ADD COLUMN "key" VARCHAR(100)',
    'CREATE UNIQUE INDEX "monitors_user_id_key" ON "monitors" ("user_id", "key")',
    _TAGS_TABLE,
    'CREATE INDEX "monitor_tags_tag" ON "monitor_tags" ("tag")',
)
# The same text suits both dialects.
SQLITE = _COMMON
POSTGRESQL = _COMMON


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
