"""0013: location quorum (docs/alerts.md#locations).

``alert_settings`` gains ``min_failed_locations`` (null: a majority of the
monitor's locations); ``monitors`` gains ``round_locations`` (``'[]'``, the
JSON list of locations that have reported in the open round) and
``round_started_at`` (null: no round open);
``check_runs`` gains ``quorum_status`` (null for existing rows: the
monitor's status after the run). Adding columns needs no table rebuild on
SQLite, and no copy of ``check_runs`` on either dialect.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl


def _ddl(time: str) -> tuple[str, ...]:
    return (
        'ALTER TABLE "alert_settings" ADD COLUMN "min_failed_locations" INTEGER',
        """ALTER TABLE "monitors" ADD COLUMN "round_locations" TEXT NOT NULL DEFAULT '[]'""",
        f'ALTER TABLE "monitors" ADD COLUMN "round_started_at" {time}',
        'ALTER TABLE "check_runs" ADD COLUMN "quorum_status" VARCHAR(16)',
    )


SQLITE = _ddl("DATETIME")
POSTGRESQL = _ddl("TIMESTAMP")


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
