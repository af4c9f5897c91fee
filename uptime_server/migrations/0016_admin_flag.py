"""0016: admin is a flag on the account; agent tokens may expire.

``users.is_admin`` (false for every existing row): who may manage probe
agents. It used to follow ``UPTIME_ADMINS`` by email address at every
request; a migration does not read settings, so no existing user gets the
flag here. ``UPTIME_ADMINS`` still grants it at sign-in, when the provider
(or the server's own ``uptime server session`` / ``login --local``) vouches
for the address and no other account holds it; ``uptime server admin grant``
sets it by hand (docs/configuration.md#admins).

``agent_tokens.expires_at`` (null: never, as every existing token).
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

SQLITE = (
    'ALTER TABLE "users" ADD COLUMN "is_admin" INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE "agent_tokens" ADD COLUMN "expires_at" DATETIME',
)
POSTGRESQL = (
    'ALTER TABLE "users" ADD COLUMN "is_admin" BOOLEAN NOT NULL DEFAULT FALSE',
    'ALTER TABLE "agent_tokens" ADD COLUMN "expires_at" TIMESTAMP',
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
