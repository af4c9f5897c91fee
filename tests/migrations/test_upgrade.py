"""Upgrading a v0.1.0 database (0001 only, with data in every table) keeps every row."""

from __future__ import annotations

import pytest

from tests.api.shapes import sqlite_only
from tests.migrations import v010_data
from tests.migrations.conftest import build_from_models
from tests.migrations.schema import describe
from uptime_server import migrations
from uptime_server.models import MODELS, Monitor, Notification, Outbox, User


@pytest.fixture
def v010_db(blank_db):
    """A database as v0.1.0 left it: schema 0001 and the rows of ``v010_data``."""
    db = blank_db()
    assert migrations.migrate(db, until=1) == ["0001_initial"]
    v010_data.insert(db)
    return db


def v010_columns(db) -> dict[str, list[str]]:
    return {table: sorted(d["columns"]) for table, d in describe(db).items()}


def test_an_upgrade_keeps_every_row_of_every_table(v010_db, blank_db):
    columns = v010_columns(v010_db)
    assert set(columns) == set(v010_data.ROWS)  # the data covers every table
    before = v010_data.read(v010_db, columns)
    assert all(before.values())

    applied = migrations.migrate(v010_db)

    assert applied == [name for version, name in migrations.available() if version > 1]
    assert v010_data.read(v010_db, columns) == before
    # Indexes, foreign keys and keys are whole again: what the models declare.
    declared = describe(build_from_models(blank_db()))
    assert describe(v010_db) == declared


def test_the_upgraded_rows_read_back_through_the_models(v010_db):
    migrations.migrate(v010_db)

    with v010_db.bind_ctx(MODELS):
        monitor = Monitor.get_by_id(1)
        assert monitor.locations == ["local", "eu"]
        assert monitor.headers == {"X-Token": "s3crét"}
        assert (monitor.follow_redirects, monitor.verify_ssl) == (True, False)
        assert monitor.offline_since.microsecond == 123456
        assert Monitor.get_by_id(5).pause_reason == "maintenance"
        assert Notification.get(Notification.status == "active").id == 2
        assert Outbox.get(Outbox.status == "pending").lease_owner == "host-1-ab"


def test_foreign_keys_still_cascade_after_the_rebuild(v010_db):
    migrations.migrate(v010_db)

    with v010_db.bind_ctx(MODELS):
        User.delete().where(User.id == 1).execute()

    # The tables of v0.1.0: later migrations add tables of their own.
    columns = {t: c for t, c in v010_columns(v010_db).items() if t in v010_data.ROWS}
    rows = v010_data.read(v010_db, columns)
    # Alice's monitor 1 took its runs, roll-ups, alerts, incidents and emails with it.
    # Tables added after v0.1.0 hold no rows of its data and are left out.
    left = {table: len(found) for table, found in rows.items() if table in v010_data.ROWS}
    assert left == {
        "users": 1,
        "identities": 1,
        "sessions": 1,
        "oauth_states": 0,
        "cli_tickets": 1,
        "monitors": 1,
        "monitor_locations": 0,
        "alert_settings": 1,
        "check_runs": 0,
        "rollups": 0,
        "notifications": 0,
        "outbox": 0,
    }


@sqlite_only
def test_after_the_upgrade_a_deleted_id_is_not_handed_out_again(v010_db):
    migrations.migrate(v010_db)
    p = v010_db.param
    copy = ", ".join([*(c for c in v010_data.MONITOR if c != "id"), "team_id"])  # 0018

    def add_monitor() -> int:
        cursor = v010_db.execute_sql(
            f"INSERT INTO monitors ({copy}) SELECT {copy} FROM monitors WHERE id = {p}", (5,)
        )
        return cursor.lastrowid

    newest = add_monitor()
    v010_db.execute_sql(f"DELETE FROM monitors WHERE id = {p}", (newest,))

    assert newest == 6
    assert add_monitor() == 7


@sqlite_only
def test_0018s_outbox_rebuild_keeps_the_counter_and_allows_rows_of_no_notification(v010_db):
    migrations.migrate(v010_db, until=17)
    newest = v010_db.execute_sql("SELECT MAX(id) FROM outbox").fetchone()[0]
    v010_db.execute_sql(f"DELETE FROM outbox WHERE id = {newest}")

    migrations.migrate(v010_db)

    cursor = v010_db.execute_sql(
        "INSERT INTO outbox (notification_id, channel, recipients, subject, payload, message_id,"
        " status, attempts, next_attempt_at, created_at, event) VALUES (NULL, 'email', '[]', '',"
        " '{}', '<i@x>', 'pending', 0, '2026-01-01', '2026-01-01', 'invitation')"
    )
    assert cursor.lastrowid == newest + 1  # the deleted id is not handed out again
