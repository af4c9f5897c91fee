"""0020: suppressed alerts (docs/alerts.md#dependencies).

``notifications.suppressed_by_id`` names the open downtime notification of
the ancestor that blocked this monitor when its downtime opened (null: not
suppressed). A plain id, not a foreign key: when the ancestor (or its
notification) is deleted, the child's next run finds no ancestor down and
releases its alert, which a ``SET NULL`` would have made look sent.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_COMMON = ('ALTER TABLE "notifications" ADD COLUMN "suppressed_by_id" INTEGER',)
# The same text suits both dialects.
SQLITE = _COMMON
POSTGRESQL = _COMMON


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
