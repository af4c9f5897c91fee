"""0008: public status pages, and badges on monitors.

``monitors`` gains ``badges`` (false for existing rows) and ``badge_token``
(null until badges are first turned on), with a unique index: a badge is
found by its token alone. ``status_pages`` is new: one row per public page,
its slug unique across users since it is the page's URL. Adding columns needs
no table rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

SQLITE = (
    'ALTER TABLE "monitors" ADD COLUMN "badges" INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE "monitors" ADD COLUMN "badge_token" VARCHAR(64)',
    'CREATE UNIQUE INDEX "monitors_badge_token" ON "monitors" ("badge_token")',
    'CREATE TABLE "status_pages" ('
    '"id" INTEGER NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"slug" VARCHAR(64) NOT NULL, '
    '"title" VARCHAR(200) NOT NULL, '
    '"description" TEXT NOT NULL, '
    '"groups" TEXT NOT NULL, '
    '"show_urls" INTEGER NOT NULL, '
    '"show_names" INTEGER NOT NULL, '
    '"created_at" DATETIME NOT NULL, '
    '"updated_at" DATETIME NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "status_pages_user_id" ON "status_pages" ("user_id")',
    'CREATE UNIQUE INDEX "status_pages_slug" ON "status_pages" ("slug")',
)
POSTGRESQL = (
    'ALTER TABLE "monitors" ADD COLUMN "badges" BOOLEAN NOT NULL DEFAULT false',
    'ALTER TABLE "monitors" ADD COLUMN "badge_token" VARCHAR(64)',
    'CREATE UNIQUE INDEX "monitors_badge_token" ON "monitors" ("badge_token")',
    'CREATE TABLE "status_pages" ('
    '"id" SERIAL NOT NULL PRIMARY KEY, '
    '"user_id" INTEGER NOT NULL, '
    '"slug" VARCHAR(64) NOT NULL, '
    '"title" VARCHAR(200) NOT NULL, '
    '"description" TEXT NOT NULL, '
    '"groups" TEXT NOT NULL, '
    '"show_urls" BOOLEAN NOT NULL, '
    '"show_names" BOOLEAN NOT NULL, '
    '"created_at" TIMESTAMP NOT NULL, '
    '"updated_at" TIMESTAMP NOT NULL, '
    'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "status_pages_user_id" ON "status_pages" ("user_id")',
    'CREATE UNIQUE INDEX "status_pages_slug" ON "status_pages" ("slug")',
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
