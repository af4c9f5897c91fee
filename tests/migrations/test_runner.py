"""The runner's SQLite safety net: foreign keys are off during a run, checked before commit."""

from __future__ import annotations

import sys
import types

import pytest

from tests.api.shapes import sqlite_only
from uptime_server import migrations

pytestmark = sqlite_only


@pytest.fixture
def orphan_migration(monkeypatch):
    """A migration 0099 that leaves a check run whose monitor does not exist."""
    module = types.ModuleType("uptime_server.migrations.0099_orphans")

    def up(db):
        db.execute_sql(
            "INSERT INTO check_runs (monitor_id, location, checked_at, status, attempts) "
            "VALUES (4242, 'local', '2026-11-01 08:00:00', 'online', 1)"
        )

    module.up = up
    monkeypatch.setitem(sys.modules, module.__name__, module)
    real = migrations.available
    monkeypatch.setattr(migrations, "available", lambda: [*real(), (99, "0099_orphans")])


def test_a_run_that_leaves_orphans_is_refused_and_rolled_back(blank_db, orphan_migration):
    db = blank_db()
    shipped = migrations.migrate(db, until=98)

    with pytest.raises(migrations.MigrationError, match="without their parent"):
        migrations.migrate(db)

    assert len(migrations.applied(db)) == len(shipped)
    assert db.execute_sql("SELECT COUNT(*) FROM check_runs").fetchone()[0] == 0
    assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1


def test_foreign_keys_are_back_on_after_a_run(blank_db):
    db = blank_db()
    migrations.migrate(db)

    assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    assert migrations.migrate(db) == []
