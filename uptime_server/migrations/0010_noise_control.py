"""0010: noise control — recovery threshold, reminders, flap detection.

``alert_settings`` gains ``recovery_threshold`` (1), ``reminder_interval``
(null: off), ``flap_threshold`` (6; null: off) and ``flap_window`` (3600);
existing rows take those defaults. ``monitors`` gains the engine's state for
them: ``consecutive_successes`` (0), ``state_changes`` (``'[]'``, a JSON ring
of recent up/down change times) and ``flapping_since`` (null).
``notifications`` gains ``next_reminder_at`` (null, indexed: the reminder
sweep reads only due rows) and ``reminders_sent`` (0). Adding columns needs
no table rebuild on SQLite (docs/alerts.md).
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_INDEX = 'CREATE INDEX "notifications_next_reminder_at" ON "notifications" ("next_reminder_at")'

SQLITE = (
    'ALTER TABLE "alert_settings" ADD COLUMN "recovery_threshold" INTEGER NOT NULL DEFAULT 1',
    'ALTER TABLE "alert_settings" ADD COLUMN "reminder_interval" INTEGER',
    'ALTER TABLE "alert_settings" ADD COLUMN "flap_threshold" INTEGER DEFAULT 6',
    'ALTER TABLE "alert_settings" ADD COLUMN "flap_window" INTEGER NOT NULL DEFAULT 3600',
    'ALTER TABLE "monitors" ADD COLUMN "consecutive_successes" INTEGER NOT NULL DEFAULT 0',
    """ALTER TABLE "monitors" ADD COLUMN "state_changes" TEXT NOT NULL DEFAULT '[]'""",
    'ALTER TABLE "monitors" ADD COLUMN "flapping_since" DATETIME',
    'ALTER TABLE "notifications" ADD COLUMN "next_reminder_at" DATETIME',
    'ALTER TABLE "notifications" ADD COLUMN "reminders_sent" INTEGER NOT NULL DEFAULT 0',
    _INDEX,
)
POSTGRESQL = (
    'ALTER TABLE "alert_settings" ADD COLUMN "recovery_threshold" INTEGER NOT NULL DEFAULT 1',
    'ALTER TABLE "alert_settings" ADD COLUMN "reminder_interval" INTEGER',
    'ALTER TABLE "alert_settings" ADD COLUMN "flap_threshold" INTEGER DEFAULT 6',
    'ALTER TABLE "alert_settings" ADD COLUMN "flap_window" INTEGER NOT NULL DEFAULT 3600',
    'ALTER TABLE "monitors" ADD COLUMN "consecutive_successes" INTEGER NOT NULL DEFAULT 0',
    """ALTER TABLE "monitors" ADD COLUMN "state_changes" TEXT NOT NULL DEFAULT '[]'""",
    'ALTER TABLE "monitors" ADD COLUMN "flapping_since" TIMESTAMP',
    'ALTER TABLE "notifications" ADD COLUMN "next_reminder_at" TIMESTAMP',
    'ALTER TABLE "notifications" ADD COLUMN "reminders_sent" INTEGER NOT NULL DEFAULT 0',
    _INDEX,
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
