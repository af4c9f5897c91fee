"""0012: maintenance windows (docs/maintenance.md).

``maintenance_windows`` holds a user's windows (deleted with the user): the
title, the monitors covered (``monitor_ids`` and ``tags``, JSON lists), the
schedule (one-off ``starts_at``/``ends_at``, or ``rrule``/``cron`` with
``duration`` and ``timezone``) and the times of opening and ending by hand.
AUTOINCREMENT on SQLite, as for the other tables whose ids are handed out.
A new table only: no rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_INDEX = 'CREATE INDEX "maintenance_windows_user_id" ON "maintenance_windows" ("user_id")'
_FOREIGN_KEY = 'FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE'


def _table(id_column: str, time: str) -> str:
    return (
        'CREATE TABLE "maintenance_windows" ('
        f'"id" {id_column}, '
        '"user_id" INTEGER NOT NULL, '
        '"title" VARCHAR(200) NOT NULL, '
        '"monitor_ids" TEXT NOT NULL, '
        '"tags" TEXT NOT NULL, '
        f'"starts_at" {time}, '
        f'"ends_at" {time}, '
        '"rrule" TEXT, '
        '"cron" VARCHAR(200), '
        '"duration" INTEGER, '
        '"timezone" VARCHAR(64) NOT NULL, '
        f'"manual_start" {time}, '
        f'"manual_end" {time}, '
        f'"ended_at" {time}, '
        f'"created_at" {time} NOT NULL, '
        f'"updated_at" {time} NOT NULL, '
        f"{_FOREIGN_KEY})"
    )


SQLITE = (_table("INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME"), _INDEX)
POSTGRESQL = (_table("SERIAL NOT NULL PRIMARY KEY", "TIMESTAMP"), _INDEX)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
