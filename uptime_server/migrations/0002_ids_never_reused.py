"""0002: ids are never reused (AUTOINCREMENT on SQLite).

SQLite hands the highest rowid out again once its row is deleted. A check in
flight when its monitor was deleted then wrote its run, status, notification
and email onto the next monitor created, maybe another user's. AUTOINCREMENT
keys never go back, and SQLite adds it only by rebuilding the table: create
``<table>_new``, copy every row with its id, drop the old table, rename,
create its indexes again. The runner has foreign keys off meanwhile, so
dropping a parent cascades nowhere; the children's REFERENCES name the table,
which is the rebuilt one after the rename (``PRAGMA foreign_key_check`` runs
before the commit).

Rebuilt: the tables whose ids are held outside a transaction and written to
later: ``users`` (a request's user), ``monitors`` (checks, "test now",
edits), ``monitor_locations`` (a claim's row), ``notifications`` and
``outbox`` (the delivery loop). Left alone: ``check_runs`` (the biggest
table; its ids are only read back, never held for a later write),
``identities``, ``sessions``, ``oauth_states`` and ``cli_tickets`` (found by
provider subject or token hash, used within one transaction), and
``alert_settings`` and ``rollups`` (keyed by their monitor).

After the upgrade the counter starts above the highest id left, so an id
deleted before it (above every remaining one) may be given out once more;
the recorder's identity check (monitor id and created_at) covers that.

PostgreSQL: nothing to do, SERIAL sequences never go back.
"""

from __future__ import annotations

from dataclasses import dataclass

import peewee

from uptime_server.migrations import run_ddl


@dataclass(frozen=True)
class Rebuild:
    """One SQLite table rebuild: new DDL, the columns copied, the indexes made again."""

    table: str
    create: str
    columns: tuple[str, ...]
    indexes: tuple[str, ...]

    def statements(self) -> tuple[str, ...]:
        cols = ", ".join(f'"{c}"' for c in self.columns)
        new = f'"{self.table}_new"'
        return (
            self.create,
            f'INSERT INTO {new} ({cols}) SELECT {cols} FROM "{self.table}"',
            f'DROP TABLE "{self.table}"',
            f'ALTER TABLE {new} RENAME TO "{self.table}"',
            *self.indexes,
        )


USERS = Rebuild(
    "users",
    'CREATE TABLE "users_new" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"email" VARCHAR(320) NOT NULL, '
    '"name" VARCHAR(200) NOT NULL, '
    '"avatar_url" VARCHAR(2048), '
    '"created_at" DATETIME NOT NULL, '
    '"last_login" DATETIME'
    ")",
    columns=("id", "email", "name", "avatar_url", "created_at", "last_login"),
    indexes=('CREATE INDEX "users_email" ON "users" ("email")',),
)


MONITORS = Rebuild(
    "monitors",
    'CREATE TABLE "monitors_new" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"user_id" INTEGER NOT NULL, '
    '"name" VARCHAR(200) NOT NULL, '
    '"url" VARCHAR(2048), '
    '"type" VARCHAR(16) NOT NULL, '
    '"method" VARCHAR(16) NOT NULL, '
    '"expected_status" TEXT NOT NULL, '
    '"timeout" INTEGER NOT NULL, '
    '"check_interval" INTEGER NOT NULL, '
    '"retry_count" INTEGER NOT NULL, '
    '"locations" TEXT NOT NULL, '
    '"follow_redirects" INTEGER NOT NULL, '
    '"verify_ssl" INTEGER NOT NULL, '
    '"headers" TEXT NOT NULL, '
    '"body" TEXT, '
    '"expected_content" TEXT, '
    '"excluded_content" TEXT, '
    '"json_path" TEXT, '
    '"expected_json_value" TEXT, '
    '"degraded_response_time" INTEGER, '
    '"status" VARCHAR(16) NOT NULL, '
    '"paused" INTEGER NOT NULL, '
    '"paused_at" DATETIME, '
    '"pause_reason" TEXT, '
    '"response_time" INTEGER, '
    '"status_code" INTEGER, '
    '"last_error" TEXT, '
    '"last_check" DATETIME, '
    '"last_success" DATETIME, '
    '"last_failure" DATETIME, '
    '"cert_expires_at" DATETIME, '
    '"consecutive_failures" INTEGER NOT NULL, '
    '"offline_since" DATETIME, '
    '"alerts_suppressed" INTEGER NOT NULL, '
    '"state_version" INTEGER NOT NULL, '
    '"created_at" DATETIME NOT NULL, '
    '"updated_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    columns=(
        "id",
        "user_id",
        "name",
        "url",
        "type",
        "method",
        "expected_status",
        "timeout",
        "check_interval",
        "retry_count",
        "locations",
        "follow_redirects",
        "verify_ssl",
        "headers",
        "body",
        "expected_content",
        "excluded_content",
        "json_path",
        "expected_json_value",
        "degraded_response_time",
        "status",
        "paused",
        "paused_at",
        "pause_reason",
        "response_time",
        "status_code",
        "last_error",
        "last_check",
        "last_success",
        "last_failure",
        "cert_expires_at",
        "consecutive_failures",
        "offline_since",
        "alerts_suppressed",
        "state_version",
        "created_at",
        "updated_at",
    ),
    indexes=(
        'CREATE INDEX "monitors_user_id" ON "monitors" ("user_id")',
        'CREATE INDEX "monitors_user_id_id" ON "monitors" ("user_id", "id")',
        'CREATE INDEX "monitors_user_status" ON "monitors" ("user_id", "status")',
    ),
)


MONITOR_LOCATIONS = Rebuild(
    "monitor_locations",
    'CREATE TABLE "monitor_locations_new" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"monitor_id" INTEGER NOT NULL, '
    '"location" VARCHAR(64) NOT NULL, '
    '"next_check_at" DATETIME, '
    '"lease_owner" VARCHAR(64), '
    '"lease_expires_at" DATETIME, '
    '"last_status" VARCHAR(16), '
    '"last_checked_at" DATETIME, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    columns=(
        "id",
        "monitor_id",
        "location",
        "next_check_at",
        "lease_owner",
        "lease_expires_at",
        "last_status",
        "last_checked_at",
    ),
    indexes=(
        'CREATE INDEX "monitor_locations_monitor_id" ON "monitor_locations" ("monitor_id")',
        'CREATE UNIQUE INDEX "monitor_locations_monitor_id_location" '
        'ON "monitor_locations" ("monitor_id", "location")',
        'CREATE INDEX "monitor_locations_location_next_check_at" '
        'ON "monitor_locations" ("location", "next_check_at")',
    ),
)


NOTIFICATIONS = Rebuild(
    "notifications",
    'CREATE TABLE "notifications_new" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"monitor_id" INTEGER NOT NULL, '
    '"user_id" INTEGER NOT NULL, '
    '"type" VARCHAR(16) NOT NULL, '
    '"message" TEXT NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"started_at" DATETIME NOT NULL, '
    '"resolved_at" DATETIME, '
    '"duration" INTEGER, '
    '"acknowledged" INTEGER NOT NULL, '
    '"acknowledged_at" DATETIME, '
    '"email_sent_at" DATETIME, '
    '"error_status_code" INTEGER, '
    '"error_response_time" INTEGER, '
    '"error_message" TEXT NOT NULL, '
    '"created_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    columns=(
        "id",
        "monitor_id",
        "user_id",
        "type",
        "message",
        "status",
        "started_at",
        "resolved_at",
        "duration",
        "acknowledged",
        "acknowledged_at",
        "email_sent_at",
        "error_status_code",
        "error_response_time",
        "error_message",
        "created_at",
    ),
    indexes=(
        'CREATE INDEX "notifications_monitor_id" ON "notifications" ("monitor_id")',
        'CREATE INDEX "notifications_user_id" ON "notifications" ("user_id")',
        'CREATE INDEX "notifications_user_id_started_at" '
        'ON "notifications" ("user_id", "started_at")',
        'CREATE INDEX "notifications_monitor_id_status" '
        'ON "notifications" ("monitor_id", "status")',
        'CREATE INDEX "notifications_monitor_id_type_resolved_at" '
        'ON "notifications" ("monitor_id", "type", "resolved_at")',
        "CREATE UNIQUE INDEX notifications_one_active "
        "ON notifications (monitor_id) WHERE status = 'active' AND type = 'downtime'",
    ),
)


OUTBOX = Rebuild(
    "outbox",
    'CREATE TABLE "outbox_new" ('
    '"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"notification_id" INTEGER NOT NULL, '
    '"channel" VARCHAR(16) NOT NULL, '
    '"recipients" TEXT NOT NULL, '
    '"target" VARCHAR(2048), '
    '"subject" TEXT NOT NULL, '
    '"payload" TEXT NOT NULL, '
    '"message_id" VARCHAR(255) NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"attempts" INTEGER NOT NULL, '
    '"next_attempt_at" DATETIME NOT NULL, '
    '"last_error" TEXT, '
    '"sent_at" DATETIME, '
    '"lease_owner" VARCHAR(64), '
    '"lease_expires_at" DATETIME, '
    '"created_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE CASCADE'
    ")",
    columns=(
        "id",
        "notification_id",
        "channel",
        "recipients",
        "target",
        "subject",
        "payload",
        "message_id",
        "status",
        "attempts",
        "next_attempt_at",
        "last_error",
        "sent_at",
        "lease_owner",
        "lease_expires_at",
        "created_at",
    ),
    indexes=(
        'CREATE INDEX "outbox_notification_id" ON "outbox" ("notification_id")',
        'CREATE UNIQUE INDEX "outbox_message_id" ON "outbox" ("message_id")',
        'CREATE INDEX "outbox_status_next_attempt_at" ON "outbox" ("status", "next_attempt_at")',
    ),
)


def up(db: peewee.Database) -> None:
    rebuilds = (USERS, MONITORS, MONITOR_LOCATIONS, NOTIFICATIONS, OUTBOX)
    run_ddl(db, sqlite=[s for r in rebuilds for s in r.statements()], postgresql=())
