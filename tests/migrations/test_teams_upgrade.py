"""0018 on real data: each user's things move into a personal team, nothing else changes.

A database at migration 17 holds three users (two whose addresses share a
local part), their monitors with badge tokens, channels, status pages,
maintenance windows, API tokens and notifications, written in raw SQL against
the 0017 schema. After the upgrade each user owns a personal team whose id is
theirs, every id is unchanged and every row has its owner's team; then the
running app answers the same status pages at the same slugs, the same badges
at the same tokens, and the old API tokens act in their user's personal team.
New teams and users get fresh ids (the PostgreSQL sequence moved past the
users').
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import peewee
import pytest

from tests.migrations import v010_data
from uptime_server import db as dbmod
from uptime_server import migrations
from uptime_server.auth.api_tokens import hash_token, new_token
from uptime_server.auth.local_users import mint_local_session
from uptime_server.config import load_settings

T = "2026-11-10 10:00:00"
BADGES = {1: "b" * 32, 5: "c" * 32}
# (id, user, scope): gaps in the ids on purpose.
TOKENS = [(3, 1, "write"), (8, 2, "read"), (9, 3, "admin")]
OWNED = ("monitors", "notifications", "channels", "status_pages", "maintenance_windows")


@pytest.fixture
def old_url(backend: str, tmp_path: Any, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'old.db'}"
    return request.getfixturevalue("fresh_pg_url")


@pytest.fixture
def old_db(old_url: str) -> Iterator[tuple[peewee.Database, dict[int, str]]]:
    """A database at 0017 with every owned kind of row; the API tokens' secrets."""
    database = dbmod.connect_url(old_url)
    database.connect()
    migrations.migrate(database, until=1)
    v010_data.insert(database)  # users 1 and 2; monitors 1 (alice) and 5 (bob)
    migrations.migrate(database, until=17)
    p = database.param

    def insert(table: str, row: dict[str, Any]) -> None:
        columns = ", ".join(f'"{c}"' for c in row)
        marks = ", ".join([p] * len(row))
        database.execute_sql(
            f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', tuple(row.values())
        )

    insert(
        "users",
        {
            "id": 7,
            "email": "alice@corp.example",
            "name": "Alice Two",
            "created_at": T,
            "is_admin": False,
        },
    )
    for monitor_id, token in BADGES.items():
        database.execute_sql(
            f"UPDATE monitors SET badges = {p}, badge_token = {p} WHERE id = {p}",
            (True, token, monitor_id),
        )
    secrets = {}
    for token_id, user_id, scope in TOKENS:
        secret = new_token()
        secrets[token_id] = secret
        insert(
            "api_tokens",
            {
                "id": token_id,
                "user_id": 7 if user_id == 3 else user_id,
                "name": f"ci-{token_id}",
                "scope": scope,
                "token_hash": hash_token(secret),
                "prefix": secret[:8],
                "created_at": T,
            },
        )
    for channel_id, user_id in ((2, 1), (6, 2)):
        insert(
            "channels",
            {
                "id": channel_id,
                "user_id": user_id,
                "name": f"hook-{channel_id}",
                "type": "webhook",
                "config": json.dumps({"url": "https://example.com/h", "secret": "s"}),
                "created_at": T,
                "updated_at": T,
            },
        )
    for page_id, user_id, slug, monitor_id in ((4, 1, "acme", 1), (11, 2, "bobs", 5)):
        insert(
            "status_pages",
            {
                "id": page_id,
                "user_id": user_id,
                "slug": slug,
                "title": slug.title(),
                "description": "",
                "groups": json.dumps([{"heading": "All", "monitor_ids": [monitor_id]}]),
                "show_urls": False,
                "show_names": True,
                "created_at": T,
                "updated_at": T,
            },
        )
    insert(
        "maintenance_windows",
        {
            "id": 3,
            "user_id": 2,
            "title": "deploys",
            "monitor_ids": "[5]",
            "tags": "[]",
            "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
            "duration": 3600,
            "timezone": "UTC",
            "created_at": T,
            "updated_at": T,
        },
    )
    if isinstance(database, peewee.PostgresqlDatabase):
        for table in ("users", "api_tokens", "channels", "maintenance_windows"):
            database.execute_sql(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), MAX(id)) FROM {table}"
            )
    try:
        yield database, secrets
    finally:
        database.close()


def owners(database: peewee.Database, table: str) -> list[tuple[int, int]]:
    return database.execute_sql(f"SELECT id, user_id FROM {table} ORDER BY id").fetchall()


def test_each_users_data_moves_into_a_personal_team(
    old_db: tuple[peewee.Database, dict[int, str]],
) -> None:
    database, _ = old_db
    before = {table: owners(database, table) for table in (*OWNED, "api_tokens")}
    assert all(before.values())

    # 0018, then the later steps (0019 dependencies, 0020 suppressed alerts).
    assert migrations.migrate(database)[0] == "0018_teams"

    teams = database.execute_sql("SELECT id, name, slug FROM teams ORDER BY id").fetchall()
    assert teams == [(1, "Alice", "alice"), (2, "Bób ✓", "bob"), (7, "Alice Two", "alice-2")]
    members = database.execute_sql(
        "SELECT team_id, user_id, role FROM memberships ORDER BY team_id"
    ).fetchall()
    assert members == [(1, 1, "owner"), (2, 2, "owner"), (7, 7, "owner")]
    personal = database.execute_sql("SELECT id, personal_team_id FROM users ORDER BY id")
    assert personal.fetchall() == [(1, 1), (2, 2), (7, 7)]
    for table, rows in before.items():
        after = database.execute_sql(
            f"SELECT id, user_id, team_id FROM {table} ORDER BY id"
        ).fetchall()
        assert after == [(i, u, u) for i, u in rows], table
    badges = database.execute_sql(
        "SELECT id, badge_token FROM monitors WHERE badge_token IS NOT NULL ORDER BY id"
    ).fetchall()
    assert dict(badges) == BADGES


def test_the_running_app_answers_as_before(
    old_db: tuple[peewee.Database, dict[int, str]],
    old_url: str,
    tmp_path: Any,
    clock: Any,
) -> None:
    database, secrets = old_db
    migrations.migrate(database)
    database.close()
    settings = load_settings(
        {
            "UPTIME_DATA_DIR": str(tmp_path / "data"),
            "UPTIME_DATABASE_URL": old_url,
            "UPTIME_SECRET_KEY": "test-secret-key",
            "UPTIME_BASE_URL": "http://127.0.0.1:8080",
            "UPTIME_RATE_LIMIT": "off",
        }
    )
    bound = dbmod.bind(settings.database_url)
    from uptime_server.app import create_app

    app = create_app(settings, clock=clock, bind_database=False)
    try:
        client = app.test_client()
        # Same slugs, same badge tokens.
        for slug in ("acme", "bobs"):
            page = client.get(f"/status/{slug}.json")
            assert page.status_code == 200, (slug, page.get_data(as_text=True))
        assert client.get("/status/acme.json").get_json()["title"] == "Acme"
        for token in BADGES.values():
            badge = client.get(f"/badge/{token}/status.svg")
            assert badge.status_code == 200, token
            assert badge.mimetype == "image/svg+xml"
        # The old tokens authenticate and act in their user's personal team.
        users = {3: 1, 8: 2, 9: 7}
        for token_id, secret in secrets.items():
            bearer = {"Authorization": f"Bearer {secret}"}
            me = client.get("/api/v1/auth/user", headers=bearer)
            assert me.status_code == 200, me.get_json()
            data = me.get_json()["data"]
            assert data["team"]["id"] == users[token_id], data
            monitors = client.get("/api/v1/monitors", headers=bearer).get_json()["data"]
            expected = {1: [1], 2: [5], 7: []}[users[token_id]]
            assert [m["id"] for m in monitors] == expected
            assert all(m["team_id"] == users[token_id] for m in monitors)
        scopes = {token_id: scope for token_id, _, scope in TOKENS}
        admin = {"Authorization": f"Bearer {secrets[9]}"}
        assert scopes[9] == "admin"
        channel = {"name": "new", "type": "webhook", "config": {"url": "https://example.com/x"}}
        made = client.post("/api/v1/channels", json=channel, headers=admin)
        assert made.status_code == 201, made.get_json()
        assert made.get_json()["data"]["team_id"] == 7
        write = {"Authorization": f"Bearer {secrets[3]}"}
        channels = client.get("/api/v1/channels", headers=write).get_json()["data"]
        assert [(c["id"], c["team_id"]) for c in channels] == [(2, 1)]
        pages = client.get("/api/v1/status-pages", headers=write).get_json()["data"]
        assert [(p["id"], p["slug"], p["team_id"]) for p in pages] == [(4, "acme", 1)]
        # A new user's personal team and a new team get fresh ids.
        session = mint_local_session(settings, email="carol@example.com", name="Carol", clock=clock)
        carol = app.test_client()
        carol.set_cookie("session_cookie", session)
        me = carol.get("/api/v1/auth/user").get_json()["data"]
        assert me["team"]["id"] not in (1, 2, 7)
        assert me["team"]["slug"] == "carol"
        team = carol.post("/api/v1/teams", json={"name": "Alice"}).get_json()["data"]
        assert team["slug"] == "alice-3" and team["id"] > 7
        # Bob's session sees his window in his personal team.
        bobs = mint_local_session(settings, email="bob@example.com", clock=clock)
        bob = app.test_client()
        bob.set_cookie("session_cookie", bobs)
        windows = bob.get("/api/v1/maintenance").get_json()["data"]
        assert [(w["id"], w["team_id"]) for w in windows] == [(3, 2)]
    finally:
        if not bound.is_closed():
            bound.close()
        close_all = getattr(bound, "close_all", None)
        if close_all:
            close_all()
