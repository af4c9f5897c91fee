"""v0.1.0: the initial schema, frozen as SQL text.

This is the DDL v0.1.0 ran: what peewee's ``create_tables`` made of its models
on each dialect, byte for byte, then two indexes of its own. A migration never
reads the models, so changing a model cannot change what this step makes (a
later ADD COLUMN would otherwise collide with a column 0001 already made on a
fresh install). Never edit it: a schema change is a new numbered module
(docs/migrations.md).
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

SQLITE = (
    'CREATE TABLE IF NOT EXISTS "users" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"email" VARCHAR(320) NOT NULL, '
    '"name" VARCHAR(200) NOT NULL, '
    '"avatar_url" VARCHAR(2048), '
    '"created_at" DATETIME NOT NULL, '
    '"last_login" DATETIME'
    ")",
    'CREATE INDEX IF NOT EXISTS "users_email" ON "users" ("email")',
    'CREATE TABLE IF NOT EXISTS "monitors" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
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
    'CREATE INDEX IF NOT EXISTS "monitors_user_id" ON "monitors" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "monitors_user_id_id" ON "monitors" ("user_id", "id")',
    'CREATE TABLE IF NOT EXISTS "alert_settings" ('
    '"monitor_id" INTEGER NOT NULL PRIMARY KEY, '
    '"email_enabled" INTEGER NOT NULL, '
    '"email_recipients" TEXT NOT NULL, '
    '"slack_enabled" INTEGER NOT NULL, '
    '"slack_webhook_url" VARCHAR(2048), '
    '"alert_on_recovery" INTEGER NOT NULL, '
    '"alert_threshold" INTEGER NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE TABLE IF NOT EXISTS "check_runs" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"monitor_id" INTEGER NOT NULL, '
    '"location" VARCHAR(64) NOT NULL, '
    '"checked_at" DATETIME NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"response_time" INTEGER, '
    '"status_code" INTEGER, '
    '"error" TEXT, '
    '"attempts" INTEGER NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "check_runs_monitor_id_checked_at" '
    'ON "check_runs" ("monitor_id", "checked_at")',
    'CREATE TABLE IF NOT EXISTS "cli_tickets" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"ticket_hash" VARCHAR(64) NOT NULL, '
    '"user_id" INTEGER NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"challenge" VARCHAR(128) NOT NULL, '
    '"expires_at" DATETIME NOT NULL, '
    '"used_at" DATETIME, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE UNIQUE INDEX IF NOT EXISTS "cli_tickets_ticket_hash" ON "cli_tickets" ("ticket_hash")',
    'CREATE INDEX IF NOT EXISTS "cli_tickets_user_id" ON "cli_tickets" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "cli_tickets_expires_at" ON "cli_tickets" ("expires_at")',
    'CREATE TABLE IF NOT EXISTS "identities" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"subject" VARCHAR(255) NOT NULL, '
    '"email" VARCHAR(320), '
    '"created_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "identities_user_id" ON "identities" ("user_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "identities_provider_subject" '
    'ON "identities" ("provider", "subject")',
    'CREATE TABLE IF NOT EXISTS "monitor_locations" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"monitor_id" INTEGER NOT NULL, '
    '"location" VARCHAR(64) NOT NULL, '
    '"next_check_at" DATETIME, '
    '"lease_owner" VARCHAR(64), '
    '"lease_expires_at" DATETIME, '
    '"last_status" VARCHAR(16), '
    '"last_checked_at" DATETIME, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "monitor_locations_monitor_id" '
    'ON "monitor_locations" ("monitor_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "monitor_locations_monitor_id_location" '
    'ON "monitor_locations" ("monitor_id", "location")',
    'CREATE INDEX IF NOT EXISTS "monitor_locations_location_next_check_at" '
    'ON "monitor_locations" ("location", "next_check_at")',
    'CREATE TABLE IF NOT EXISTS "notifications" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
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
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id" ON "notifications" ("monitor_id")',
    'CREATE INDEX IF NOT EXISTS "notifications_user_id" ON "notifications" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "notifications_user_id_started_at" '
    'ON "notifications" ("user_id", "started_at")',
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id_status" '
    'ON "notifications" ("monitor_id", "status")',
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id_type_resolved_at" '
    'ON "notifications" ("monitor_id", "type", "resolved_at")',
    'CREATE TABLE IF NOT EXISTS "oauth_states" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"state_hash" VARCHAR(64) NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"browser_hash" VARCHAR(64) NOT NULL, '
    '"nonce" VARCHAR(128), '
    '"next_url" VARCHAR(2048), '
    '"cli_redirect" VARCHAR(2048), '
    '"cli_challenge" VARCHAR(128), '
    '"link_user_id" INTEGER, '
    '"created_at" DATETIME NOT NULL, '
    '"expires_at" DATETIME NOT NULL, '
    '"used_at" DATETIME, '
    'FOREIGN KEY ("link_user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE UNIQUE INDEX IF NOT EXISTS "oauth_states_state_hash" ON "oauth_states" ("state_hash")',
    'CREATE INDEX IF NOT EXISTS "oauth_states_link_user_id" ON "oauth_states" ("link_user_id")',
    'CREATE INDEX IF NOT EXISTS "oauth_states_expires_at" ON "oauth_states" ("expires_at")',
    'CREATE TABLE IF NOT EXISTS "outbox" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
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
    'CREATE INDEX IF NOT EXISTS "outbox_notification_id" ON "outbox" ("notification_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "outbox_message_id" ON "outbox" ("message_id")',
    'CREATE INDEX IF NOT EXISTS "outbox_status_next_attempt_at" '
    'ON "outbox" ("status", "next_attempt_at")',
    'CREATE TABLE IF NOT EXISTS "rollups" ('
    '"monitor_id" INTEGER NOT NULL, '
    '"resolution" INTEGER NOT NULL, '
    '"bucket" INTEGER NOT NULL, '
    '"checks" INTEGER NOT NULL, '
    '"failed" INTEGER NOT NULL, '
    '"rt_count" INTEGER NOT NULL, '
    '"rt_sum" INTEGER NOT NULL, '
    '"rt_min" INTEGER, '
    '"rt_max" INTEGER, '
    '"p95" INTEGER, '
    '"hist" TEXT NOT NULL, '
    'PRIMARY KEY ("monitor_id", "resolution", "bucket"), '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE TABLE IF NOT EXISTS "sessions" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"token_hash" VARCHAR(64) NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"created_at" DATETIME NOT NULL, '
    '"expires_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "sessions_user_id" ON "sessions" ("user_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "sessions_token_hash" ON "sessions" ("token_hash")',
    'CREATE INDEX IF NOT EXISTS "sessions_expires_at" ON "sessions" ("expires_at")',
)

POSTGRESQL = (
    'CREATE TABLE IF NOT EXISTS "users" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"email" VARCHAR(320) NOT NULL, '
    '"name" VARCHAR(200) NOT NULL, '
    '"avatar_url" VARCHAR(2048), '
    '"created_at" TIMESTAMP NOT NULL, '
    '"last_login" TIMESTAMP'
    ")",
    'CREATE INDEX IF NOT EXISTS "users_email" ON "users" ("email")',
    'CREATE TABLE IF NOT EXISTS "monitors" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
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
    '"follow_redirects" BOOLEAN NOT NULL, '
    '"verify_ssl" BOOLEAN NOT NULL, '
    '"headers" TEXT NOT NULL, '
    '"body" TEXT, '
    '"expected_content" TEXT, '
    '"excluded_content" TEXT, '
    '"json_path" TEXT, '
    '"expected_json_value" TEXT, '
    '"degraded_response_time" INTEGER, '
    '"status" VARCHAR(16) NOT NULL, '
    '"paused" BOOLEAN NOT NULL, '
    '"paused_at" TIMESTAMP, '
    '"pause_reason" TEXT, '
    '"response_time" INTEGER, '
    '"status_code" INTEGER, '
    '"last_error" TEXT, '
    '"last_check" TIMESTAMP, '
    '"last_success" TIMESTAMP, '
    '"last_failure" TIMESTAMP, '
    '"cert_expires_at" TIMESTAMP, '
    '"consecutive_failures" INTEGER NOT NULL, '
    '"offline_since" TIMESTAMP, '
    '"alerts_suppressed" BOOLEAN NOT NULL, '
    '"state_version" INTEGER NOT NULL, '
    '"created_at" TIMESTAMP NOT NULL, '
    '"updated_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "monitors_user_id" ON "monitors" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "monitors_user_id_id" ON "monitors" ("user_id", "id")',
    'CREATE TABLE IF NOT EXISTS "alert_settings" ('
    '"monitor_id" INTEGER NOT NULL PRIMARY KEY, '
    '"email_enabled" BOOLEAN NOT NULL, '
    '"email_recipients" TEXT NOT NULL, '
    '"slack_enabled" BOOLEAN NOT NULL, '
    '"slack_webhook_url" VARCHAR(2048), '
    '"alert_on_recovery" BOOLEAN NOT NULL, '
    '"alert_threshold" INTEGER NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE TABLE IF NOT EXISTS "check_runs" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"monitor_id" INTEGER NOT NULL, '
    '"location" VARCHAR(64) NOT NULL, '
    '"checked_at" TIMESTAMP NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"response_time" INTEGER, '
    '"status_code" INTEGER, '
    '"error" TEXT, '
    '"attempts" INTEGER NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "check_runs_monitor_id_checked_at" '
    'ON "check_runs" ("monitor_id", "checked_at")',
    'CREATE TABLE IF NOT EXISTS "cli_tickets" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"ticket_hash" VARCHAR(64) NOT NULL, '
    '"user_id" INTEGER NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"challenge" VARCHAR(128) NOT NULL, '
    '"expires_at" TIMESTAMP NOT NULL, '
    '"used_at" TIMESTAMP, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE UNIQUE INDEX IF NOT EXISTS "cli_tickets_ticket_hash" ON "cli_tickets" ("ticket_hash")',
    'CREATE INDEX IF NOT EXISTS "cli_tickets_user_id" ON "cli_tickets" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "cli_tickets_expires_at" ON "cli_tickets" ("expires_at")',
    'CREATE TABLE IF NOT EXISTS "identities" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"subject" VARCHAR(255) NOT NULL, '
    '"email" VARCHAR(320), '
    '"created_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "identities_user_id" ON "identities" ("user_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "identities_provider_subject" '
    'ON "identities" ("provider", "subject")',
    'CREATE TABLE IF NOT EXISTS "monitor_locations" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"monitor_id" INTEGER NOT NULL, '
    '"location" VARCHAR(64) NOT NULL, '
    '"next_check_at" TIMESTAMP, '
    '"lease_owner" VARCHAR(64), '
    '"lease_expires_at" TIMESTAMP, '
    '"last_status" VARCHAR(16), '
    '"last_checked_at" TIMESTAMP, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "monitor_locations_monitor_id" '
    'ON "monitor_locations" ("monitor_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "monitor_locations_monitor_id_location" '
    'ON "monitor_locations" ("monitor_id", "location")',
    'CREATE INDEX IF NOT EXISTS "monitor_locations_location_next_check_at" '
    'ON "monitor_locations" ("location", "next_check_at")',
    'CREATE TABLE IF NOT EXISTS "notifications" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"monitor_id" INTEGER NOT NULL, '
    '"user_id" INTEGER NOT NULL, '
    '"type" VARCHAR(16) NOT NULL, '
    '"message" TEXT NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"started_at" TIMESTAMP NOT NULL, '
    '"resolved_at" TIMESTAMP, '
    '"duration" INTEGER, '
    '"acknowledged" BOOLEAN NOT NULL, '
    '"acknowledged_at" TIMESTAMP, '
    '"email_sent_at" TIMESTAMP, '
    '"error_status_code" INTEGER, '
    '"error_response_time" INTEGER, '
    '"error_message" TEXT NOT NULL, '
    '"created_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id" ON "notifications" ("monitor_id")',
    'CREATE INDEX IF NOT EXISTS "notifications_user_id" ON "notifications" ("user_id")',
    'CREATE INDEX IF NOT EXISTS "notifications_user_id_started_at" '
    'ON "notifications" ("user_id", "started_at")',
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id_status" '
    'ON "notifications" ("monitor_id", "status")',
    'CREATE INDEX IF NOT EXISTS "notifications_monitor_id_type_resolved_at" '
    'ON "notifications" ("monitor_id", "type", "resolved_at")',
    'CREATE TABLE IF NOT EXISTS "oauth_states" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"state_hash" VARCHAR(64) NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"browser_hash" VARCHAR(64) NOT NULL, '
    '"nonce" VARCHAR(128), '
    '"next_url" VARCHAR(2048), '
    '"cli_redirect" VARCHAR(2048), '
    '"cli_challenge" VARCHAR(128), '
    '"link_user_id" INTEGER, '
    '"created_at" TIMESTAMP NOT NULL, '
    '"expires_at" TIMESTAMP NOT NULL, '
    '"used_at" TIMESTAMP, '
    'FOREIGN KEY ("link_user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE UNIQUE INDEX IF NOT EXISTS "oauth_states_state_hash" ON "oauth_states" ("state_hash")',
    'CREATE INDEX IF NOT EXISTS "oauth_states_link_user_id" ON "oauth_states" ("link_user_id")',
    'CREATE INDEX IF NOT EXISTS "oauth_states_expires_at" ON "oauth_states" ("expires_at")',
    'CREATE TABLE IF NOT EXISTS "outbox" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"notification_id" INTEGER NOT NULL, '
    '"channel" VARCHAR(16) NOT NULL, '
    '"recipients" TEXT NOT NULL, '
    '"target" VARCHAR(2048), '
    '"subject" TEXT NOT NULL, '
    '"payload" TEXT NOT NULL, '
    '"message_id" VARCHAR(255) NOT NULL, '
    '"status" VARCHAR(16) NOT NULL, '
    '"attempts" INTEGER NOT NULL, '
    '"next_attempt_at" TIMESTAMP NOT NULL, '
    '"last_error" TEXT, '
    '"sent_at" TIMESTAMP, '
    '"lease_owner" VARCHAR(64), '
    '"lease_expires_at" TIMESTAMP, '
    '"created_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "outbox_notification_id" ON "outbox" ("notification_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "outbox_message_id" ON "outbox" ("message_id")',
    'CREATE INDEX IF NOT EXISTS "outbox_status_next_attempt_at" '
    'ON "outbox" ("status", "next_attempt_at")',
    'CREATE TABLE IF NOT EXISTS "rollups" ('
    '"monitor_id" INTEGER NOT NULL, '
    '"resolution" INTEGER NOT NULL, '
    '"bucket" BIGINT NOT NULL, '
    '"checks" INTEGER NOT NULL, '
    '"failed" INTEGER NOT NULL, '
    '"rt_count" INTEGER NOT NULL, '
    '"rt_sum" BIGINT NOT NULL, '
    '"rt_min" INTEGER, '
    '"rt_max" INTEGER, '
    '"p95" INTEGER, '
    '"hist" TEXT NOT NULL, '
    'PRIMARY KEY ("monitor_id", "resolution", "bucket"), '
    'FOREIGN KEY ("monitor_id") REFERENCES "monitors" ("id") ON DELETE CASCADE'
    ")",
    'CREATE TABLE IF NOT EXISTS "sessions" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"token_hash" VARCHAR(64) NOT NULL, '
    '"provider" VARCHAR(64) NOT NULL, '
    '"created_at" TIMESTAMP NOT NULL, '
    '"expires_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'
    ")",
    'CREATE INDEX IF NOT EXISTS "sessions_user_id" ON "sessions" ("user_id")',
    'CREATE UNIQUE INDEX IF NOT EXISTS "sessions_token_hash" ON "sessions" ("token_hash")',
    'CREATE INDEX IF NOT EXISTS "sessions_expires_at" ON "sessions" ("expires_at")',
)

# Both dialects. At most one active downtime notification per monitor: the
# last wall behind the conditional state update (docs/api.md#notification-life-cycle).
INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS notifications_one_active "
    "ON notifications (monitor_id) WHERE status = 'active' AND type = 'downtime'",
    "CREATE INDEX IF NOT EXISTS monitors_user_status ON monitors (user_id, status)",
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE + INDEXES, postgresql=POSTGRESQL + INDEXES)
