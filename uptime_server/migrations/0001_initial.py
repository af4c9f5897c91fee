"""v0.1.0 schema: every table of uptime_server.models, plus partial indexes."""

from __future__ import annotations

import peewee

from uptime_server.models import MODELS


def up(db: peewee.Database) -> None:
    with db.bind_ctx(MODELS):
        db.create_tables(MODELS, safe=True)
    # At most one active downtime notification per monitor: the last wall
    # behind the conditional state update (decisions §6).
    db.execute_sql(
        "CREATE UNIQUE INDEX IF NOT EXISTS notifications_one_active "
        "ON notifications (monitor_id) WHERE status = 'active' AND type = 'downtime'"
    )
    db.execute_sql("CREATE INDEX IF NOT EXISTS monitors_user_status ON monitors (user_id, status)")
