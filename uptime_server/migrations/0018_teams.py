"""0018: teams own everything (docs/teams.md).

New tables: ``teams``, ``memberships`` (team, user, role), ``invitations``
(only the SHA-256 of a token) and ``audit_events``.

Every existing user gets a personal team whose id is the user's id, with the
user as its owner, and ``users.personal_team_id`` pointing at it; the team's
name is the user's name (or the address's local part) and its slug the
address's local part made URL-safe, numbered when taken. Then ``team_id`` is
filled from ``user_id`` on monitors, notifications, channels, status pages,
maintenance windows and API tokens, so no id changes and nothing moves: slugs
of status pages and badge tokens stay as they were. ``user_id`` stays on those
rows as who created them.

The per-user indexes (monitor keys, channel names, the monitor list's status
filter, notifications by time) become per-team ones. Adding a NOT NULL column
with REFERENCES to an existing SQLite table is allowed while foreign keys are
off, which they are during a migration; the run's foreign_key_check then
proves every row found its team.

``outbox.notification_id`` becomes nullable: an invitation's email is an
outbox row about no notification (event ``invitation``). SQLite drops a NOT
NULL only by rebuilding the table (as 0002 did): the same DDL without it, the
rows copied with their ids, the AUTOINCREMENT counter carried over so no id
is handed out twice, the indexes made again.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import peewee

from uptime_server.migrations import run_ddl

_FK = 'REFERENCES "teams" ("id") ON DELETE CASCADE'
_OWNED = ("monitors", "notifications", "channels", "status_pages", "maintenance_windows")


def _tables(id_column: str, time: str, big: str) -> tuple[str, ...]:
    return (
        'CREATE TABLE "teams" ('
        f'"id" {id_column}, "name" VARCHAR(200) NOT NULL, "slug" VARCHAR(64) NOT NULL, '
        f'"created_at" {time} NOT NULL)',
        'CREATE UNIQUE INDEX "teams_slug" ON "teams" ("slug")',
        'CREATE TABLE "memberships" ('
        f'"id" {id_column.replace(" AUTOINCREMENT", "")}, '
        '"team_id" INTEGER NOT NULL, "user_id" INTEGER NOT NULL, '
        f'"role" VARCHAR(16) NOT NULL, "created_at" {time} NOT NULL, '
        'FOREIGN KEY ("team_id") REFERENCES "teams" ("id") ON DELETE CASCADE, '
        'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)',
        'CREATE INDEX "memberships_user_id" ON "memberships" ("user_id")',
        'CREATE UNIQUE INDEX "memberships_team_id_user_id" ON "memberships" ("team_id", "user_id")',
        'CREATE TABLE "invitations" ('
        f'"id" {id_column}, "team_id" INTEGER NOT NULL, "email" VARCHAR(320) NOT NULL, '
        '"role" VARCHAR(16) NOT NULL, "token_hash" VARCHAR(64) NOT NULL, '
        f'"invited_by_id" INTEGER, "created_at" {time} NOT NULL, '
        f'"expires_at" {time} NOT NULL, "accepted_at" {time}, "accepted_by_id" INTEGER, '
        'FOREIGN KEY ("team_id") REFERENCES "teams" ("id") ON DELETE CASCADE, '
        'FOREIGN KEY ("invited_by_id") REFERENCES "users" ("id") ON DELETE SET NULL, '
        'FOREIGN KEY ("accepted_by_id") REFERENCES "users" ("id") ON DELETE SET NULL)',
        'CREATE INDEX "invitations_team_id" ON "invitations" ("team_id")',
        'CREATE UNIQUE INDEX "invitations_token_hash" ON "invitations" ("token_hash")',
        'CREATE TABLE "audit_events" ('
        f'"id" {id_column}, "team_id" INTEGER NOT NULL, "at" {time} NOT NULL, '
        '"actor_id" INTEGER, "actor_name" VARCHAR(200) NOT NULL, '
        f'"via_type" VARCHAR(16) NOT NULL, "via_id" {big}, "action" VARCHAR(64) NOT NULL, '
        f'"target_type" VARCHAR(32), "target_id" {big}, "details" TEXT NOT NULL, '
        'FOREIGN KEY ("team_id") REFERENCES "teams" ("id") ON DELETE CASCADE, '
        'FOREIGN KEY ("actor_id") REFERENCES "users" ("id") ON DELETE SET NULL)',
        'CREATE INDEX "audit_events_team_id_at" ON "audit_events" ("team_id", "at")',
    )


def _columns(team_column: str) -> tuple[str, ...]:
    return (
        'ALTER TABLE "users" ADD COLUMN "personal_team_id" INTEGER '
        'REFERENCES "teams" ("id") ON DELETE SET NULL',
        *(
            f'ALTER TABLE "{table}" ADD COLUMN "team_id" {team_column} {_FK}'
            for table in (*_OWNED, "api_tokens")
        ),
        'ALTER TABLE "notifications" ADD COLUMN "acknowledged_by_id" INTEGER '
        'REFERENCES "users" ("id") ON DELETE SET NULL',
        'ALTER TABLE "notifications" ADD COLUMN "resolved_by_id" INTEGER '
        'REFERENCES "users" ("id") ON DELETE SET NULL',
    )


_FILL = (
    'UPDATE "users" SET "personal_team_id" = "id"',
    *(f'UPDATE "{table}" SET "team_id" = "user_id"' for table in (*_OWNED, "api_tokens")),
)

_INDEXES = (
    'DROP INDEX "monitors_user_id_id"',
    'DROP INDEX "monitors_user_id_key"',
    'DROP INDEX "monitors_user_status"',
    'DROP INDEX "notifications_user_id_started_at"',
    'DROP INDEX "channels_user_id_name"',
    'CREATE INDEX "monitors_team_id_id" ON "monitors" ("team_id", "id")',
    'CREATE UNIQUE INDEX "monitors_team_id_key" ON "monitors" ("team_id", "key")',
    'CREATE INDEX "monitors_team_status" ON "monitors" ("team_id", "status")',
    'CREATE INDEX "notifications_team_id_started_at" ON "notifications" ("team_id", "started_at")',
    'CREATE UNIQUE INDEX "channels_team_id_name" ON "channels" ("team_id", "name")',
    'CREATE INDEX "status_pages_team_id" ON "status_pages" ("team_id")',
    'CREATE INDEX "maintenance_windows_team_id" ON "maintenance_windows" ("team_id")',
    'CREATE INDEX "api_tokens_team_id" ON "api_tokens" ("team_id")',
)

# PostgreSQL checks a new column's REFERENCES at once: it is added empty,
# filled, then made NOT NULL. (SQLite gets NOT NULL DEFAULT 0 up front.)
_PG_NOT_NULL = tuple(
    f'ALTER TABLE "{table}" ALTER COLUMN "team_id" SET NOT NULL'
    for table in (*_OWNED, "api_tokens")
)

_OUTBOX_COLUMNS = (
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
    "channel_id",
    "event",
)
_OUTBOX_COPY = ", ".join(f'"{c}"' for c in _OUTBOX_COLUMNS)
_SQLITE_OUTBOX = (
    'CREATE TABLE "outbox_new" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, '
    '"notification_id" INTEGER, "channel" VARCHAR(16) NOT NULL, "recipients" TEXT NOT NULL, '
    '"target" VARCHAR(2048), "subject" TEXT NOT NULL, "payload" TEXT NOT NULL, '
    '"message_id" VARCHAR(255) NOT NULL, "status" VARCHAR(16) NOT NULL, '
    '"attempts" INTEGER NOT NULL, "next_attempt_at" DATETIME NOT NULL, "last_error" TEXT, '
    '"sent_at" DATETIME, "lease_owner" VARCHAR(64), "lease_expires_at" DATETIME, '
    '"created_at" DATETIME NOT NULL, "channel_id" INTEGER, '
    """"event" VARCHAR(16) NOT NULL DEFAULT 'alert', """
    'FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE CASCADE)',
    f'INSERT INTO "outbox_new" ({_OUTBOX_COPY}) SELECT {_OUTBOX_COPY} FROM "outbox"',
    # The counter of the old table, not the highest id left: a deleted row's
    # id must not come back.
    "DELETE FROM sqlite_sequence WHERE name = 'outbox_new'",
    "INSERT INTO sqlite_sequence (name, seq) "
    "SELECT 'outbox_new', seq FROM sqlite_sequence WHERE name = 'outbox'",
    'DROP TABLE "outbox"',
    'ALTER TABLE "outbox_new" RENAME TO "outbox"',
    'CREATE INDEX "outbox_notification_id" ON "outbox" ("notification_id")',
    'CREATE UNIQUE INDEX "outbox_message_id" ON "outbox" ("message_id")',
    'CREATE INDEX "outbox_status_next_attempt_at" ON "outbox" ("status", "next_attempt_at")',
)
_PG_OUTBOX = ('ALTER TABLE "outbox" ALTER COLUMN "notification_id" DROP NOT NULL',)

SQLITE = (
    *_tables("INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME", "INTEGER"),
    *_columns("INTEGER NOT NULL DEFAULT 0"),
    *_SQLITE_OUTBOX,
)
POSTGRESQL = (
    *_tables("SERIAL NOT NULL PRIMARY KEY", "TIMESTAMP", "BIGINT"),
    *_columns("INTEGER"),
    *_PG_OUTBOX,
)

SLUG_LENGTH = 64


def slug_base(text: str) -> str:
    """A URL-safe slug of *text* (lower case, a-z 0-9 and dashes) with a letter in
    it (one of digits only would read as a team id), never empty."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[: SLUG_LENGTH - 8].strip("-")
    if not slug:
        return "team"
    return slug if re.search("[a-z]", slug) else f"team-{slug}"


def _personal_teams(db: peewee.Database) -> None:
    users = db.execute_sql('SELECT "id", "email", "name" FROM "users" ORDER BY "id"').fetchall()
    taken: set[str] = set()
    now = datetime.now(UTC).replace(tzinfo=None)
    p = db.param
    for user_id, email, name in users:
        local = (email or "").partition("@")[0]
        base = slug_base(local or name or "team")
        slug, n = base, 1
        while slug in taken:
            n += 1
            slug = f"{base}-{n}"
        taken.add(slug)
        db.execute_sql(
            f'INSERT INTO "teams" ("id", "name", "slug", "created_at") VALUES ({p}, {p}, {p}, {p})',
            (user_id, (name or local or "Personal")[:200], slug, now),
        )
        db.execute_sql(
            'INSERT INTO "memberships" ("team_id", "user_id", "role", "created_at") '
            f"VALUES ({p}, {p}, 'owner', {p})",
            (user_id, user_id, now),
        )


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
    _personal_teams(db)
    run_ddl(db, sqlite=(*_FILL, *_INDEXES), postgresql=(*_FILL, *_PG_NOT_NULL, *_INDEXES))
    if not isinstance(db, peewee.SqliteDatabase):
        # Ids were given by hand: the next team must come after them.
        db.execute_sql(
            "SELECT setval(pg_get_serial_sequence('teams', 'id'), "
            'COALESCE((SELECT MAX("id") FROM "teams"), 0) + 1, false)'
        )
