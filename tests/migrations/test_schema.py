"""The schema the migrations make is the one the models declare, on each backend."""

from __future__ import annotations

from tests.api.shapes import sqlite_only
from tests.migrations.conftest import build_from_models
from tests.migrations.schema import describe
from uptime_server import migrations

# Their ids outlive a transaction (see migration 0002): never handed out twice.
# channels: an outbox row names its channel by id (0009), so a reused id would
# deliver to someone else's new channel.
NEVER_REUSED = {
    "users",
    "monitors",
    "monitor_locations",
    "notifications",
    "maintenance_windows",
    "channels",
    "outbox",
    "api_tokens",
    "agent_tokens",  # an agent's id is in its lease owner tokens (0011)
    # 0018: a CLI's saved team, an audit line or an invitation id must never
    # name somebody else's new row.
    "teams",
    "invitations",
    "audit_events",
}


def assert_same_schema(made: dict, declared: dict) -> None:
    assert sorted(made) == sorted(declared)
    for table, want in declared.items():
        assert made[table] == want, f"table {table} differs from its model"


def test_the_migrated_schema_is_what_the_models_declare(blank_db):
    migrated = blank_db()
    migrations.migrate(migrated)
    declared = build_from_models(blank_db())

    assert_same_schema(describe(migrated), describe(declared))


def test_the_comparison_sees_a_missing_index_and_a_changed_column(blank_db):
    migrated = blank_db()
    migrations.migrate(migrated)
    declared = describe(build_from_models(blank_db()))
    migrated.execute_sql("DROP INDEX notifications_one_active")
    migrated.execute_sql("ALTER TABLE users ADD COLUMN nickname TEXT")

    made = describe(migrated)

    assert "notifications_one_active" not in made["notifications"]["indexes"]
    assert "nickname" in made["users"]["columns"]
    assert made["notifications"] != declared["notifications"]
    assert made["users"] != declared["users"]


@sqlite_only
def test_tables_whose_ids_outlive_a_transaction_are_autoincrement_on_sqlite(blank_db):
    migrated = blank_db()
    migrations.migrate(migrated)
    tables = describe(migrated)

    keyed = {t for t, d in tables.items() if d["columns"].get("id", {}).get("generated")}
    assert keyed == NEVER_REUSED
