"""0019: monitor dependencies (docs/monitors.md#dependencies).

``monitor_dependencies`` holds one row per edge: ``monitor_id`` (the child)
depends on ``depends_on_id`` (the parent). Keyed by both, so an edge is never
stored twice; both ends cascade, so deleting either monitor removes the edge;
an index on ``depends_on_id`` finds a parent's children.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_COMMON = (
    'CREATE TABLE "monitor_dependencies" ('
    '"monitor_id" INTEGER NOT NULL, '
    '"depends_on_id" INTEGER NOT NULL, '
    'PRIMARY KEY ("monitor_id", "depends_on_id"), '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE, '
    'FOREIGN KEY ("depends_on_id") REFERENCES "monitors" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "monitor_dependencies_depends_on_id" ON "monitor_dependencies" ("depends_on_id")',
)
# The same text suits both dialects.
SQLITE = _COMMON
POSTGRESQL = _COMMON


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
