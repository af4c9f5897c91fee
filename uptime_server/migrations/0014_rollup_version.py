"""0014: ``monitors.rollup_version``, bumped whenever the monitor's roll-ups change.

The roll-up writer (``stats.rollups.add_runs``) adds one to it in the
transaction that writes the rows, so a reader that sees a version has the
roll-ups of at least that version. The API keeps the uptime figures it has
computed per monitor, window and version (``stats.uptime_cache``) and
recomputes them only when the version or the window moves. Existing rows
start at 0. Adding a column needs no table rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

SQLITE = ('ALTER TABLE "monitors" ADD COLUMN "rollup_version" INTEGER NOT NULL DEFAULT 0',)
POSTGRESQL = ('ALTER TABLE "monitors" ADD COLUMN "rollup_version" INTEGER NOT NULL DEFAULT 0',)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
