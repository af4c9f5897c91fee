"""0005: heartbeat monitors and their pings.

``monitors`` gains the heartbeat schedule (``period``, ``grace``, ``cron``,
``timezone``), the ping token (``ping_token_hash``, unique: the ping path's
lookup, and ``ping_token_sealed``) and ``ping_started_at``; ``check_runs``
gains what a ping carries (``kind``, ``exit_code``, ``message``,
``source_ip``, ``user_agent``). All nullable: existing rows are untouched, and
adding nullable columns rewrites no table on either database.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

# (table, column, SQLite type, PostgreSQL type)
_COLUMNS = (
    ("monitors", "period", "INTEGER", "INTEGER"),
    ("monitors", "grace", "INTEGER", "INTEGER"),
    ("monitors", "cron", "VARCHAR(200)", "VARCHAR(200)"),
    ("monitors", "timezone", "VARCHAR(64)", "VARCHAR(64)"),
    ("monitors", "ping_token_hash", "VARCHAR(64)", "VARCHAR(64)"),
    ("monitors", "ping_token_sealed", "TEXT", "TEXT"),
    ("monitors", "ping_started_at", "DATETIME", "TIMESTAMP"),
    ("check_runs", "kind", "VARCHAR(16)", "VARCHAR(16)"),
    ("check_runs", "exit_code", "INTEGER", "INTEGER"),
    ("check_runs", "message", "TEXT", "TEXT"),
    ("check_runs", "source_ip", "VARCHAR(64)", "VARCHAR(64)"),
    ("check_runs", "user_agent", "VARCHAR(512)", "VARCHAR(512)"),
)
_INDEX = 'CREATE UNIQUE INDEX "monitors_ping_token_hash" ON "monitors" ("ping_token_hash")'

SQLITE = (
    *(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {lite}' for table, name, lite, _ in _COLUMNS),
    _INDEX,
)
POSTGRESQL = (
    *(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {pg}' for table, name, _, pg in _COLUMNS),
    _INDEX,
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
