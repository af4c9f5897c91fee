"""0009: named notification channels.

``channels`` holds a user's channels (``{name, type, config}``);
``alert_settings.channel_ids`` lists the channels a monitor alerts, existing
rows none; ``outbox`` rows say which channel they go to (``channel_id``, null
for the implicit email/Slack channels of the alert settings) and what they
report (``event``: ``alert`` for every existing row, or ``acknowledge``).
Only new tables and added columns: no rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_INDEXES = (
    'CREATE INDEX "channels_user_id" ON "channels" ("user_id")',
    'CREATE UNIQUE INDEX "channels_user_id_name" ON "channels" ("user_id", "name")',
)
_COLUMNS = (
    """ALTER TABLE "alert_settings" ADD COLUMN "channel_ids" TEXT NOT NULL DEFAULT '[]'""",
    'ALTER TABLE "outbox" ADD COLUMN "channel_id" INTEGER',
    """ALTER TABLE "outbox" ADD COLUMN "event" VARCHAR(16) NOT NULL DEFAULT 'alert'""",
)

SQLITE = (
    'CREATE TABLE "channels" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"user_id" INTEGER NOT NULL, "name" VARCHAR(200) NOT NULL, "type" VARCHAR(16) NOT NULL, '
    '"config" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)',
    *_INDEXES,
    *_COLUMNS,
)
POSTGRESQL = (
    'CREATE TABLE "channels" ("id" SERIAL NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, "name" VARCHAR(200) NOT NULL, "type" VARCHAR(16) NOT NULL, '
    '"config" TEXT NOT NULL, "created_at" TIMESTAMP NOT NULL, "updated_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)',
    *_INDEXES,
    *_COLUMNS,
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
