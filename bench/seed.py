"""Bench databases: a migrated schema, one user and N monitors, inserted in bulk."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import peewee

from uptime_server import db, migrations
from uptime_server.auth.teams import create_personal_team
from uptime_server.models import MODELS, AlertSettings, Monitor, MonitorLocation, User


def reset(url: str) -> None:
    """An empty, migrated database at *url* (PostgreSQL tables are truncated)."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)
    database = db.bind(url)
    with database.connection_context():
        migrations.migrate(database)
        if isinstance(database, peewee.PostgresqlDatabase):
            tables = ", ".join(m._meta.table_name for m in MODELS)
            database.execute_sql(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")


def seed_monitors(
    url: str,
    target: str,
    count: int,
    *,
    interval: int,
    first_due: datetime,
    spread: float,
) -> None:
    """*count* monitors of *target*, due from *first_due* evenly over *spread* seconds."""
    database = db.bind(url)
    now = datetime.now(first_due.tzinfo)
    with database.connection_context(), database.atomic():
        user = User.create(email="bench@example.com", name="bench", created_at=now)
        create_personal_team(user, now=now)
        rows = [
            {
                "user": user.id,
                "team": user.personal_team_id,
                "name": f"bench-{i}",
                "url": target,
                # The URL's scheme is the monitor type: http, https or tcp.
                "type": target.partition(":")[0],
                "timeout": 5,
                "check_interval": interval,
                "created_at": now,
                "updated_at": now,
                "status": "online",
            }
            for i in range(count)
        ]
        for chunk in peewee.chunked(rows, 500):
            Monitor.insert_many(chunk).execute()
        ids = [m.id for m in Monitor.select(Monitor.id).order_by(Monitor.id)]
        for chunk in peewee.chunked(ids, 500):
            AlertSettings.insert_many([{"monitor": i} for i in chunk]).execute()
        step = spread / count
        slots = [
            {
                "monitor": mid,
                "location": "local",
                "next_check_at": first_due + timedelta(seconds=n * step),
                # Not a first run: no jitter offset, the phase stays as seeded.
                "last_status": "online",
            }
            for n, mid in enumerate(ids)
        ]
        for chunk in peewee.chunked(slots, 500):
            MonitorLocation.insert_many(chunk).execute()
    if isinstance(database, peewee.PostgresqlDatabase):
        # The planner's statistics, as autovacuum keeps them on a database that
        # grew to this size: without them, a table filled a second ago is
        # read whole for each batch's ``monitor_id IN (...)``.
        with database.connection_context():
            database.execute_sql("ANALYZE")
    database.close()


def point_some_at(url: str, every: int, target: str) -> int:
    """Point every *every*-th monitor (by id) at *target*; how many were moved."""
    database = db.bind(url)
    with database.connection_context():
        # Not `Monitor.id % every`: peewee reads % as LIKE.
        moved = Monitor.update(url=target).where(peewee.SQL(f"id % {int(every)} = 0")).execute()
    database.close()
    return moved
