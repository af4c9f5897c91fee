"""Connection settings the daemon relies on, on each backend."""

from __future__ import annotations

from typing import Any

import pytest

from uptime_server import db as dbmod
from uptime_server.auth.teams import create_personal_team


def test_it_opens_sqlite_in_wal_with_foreign_keys(tmp_path: Any) -> None:
    database = dbmod.connect_url(f"sqlite:///{tmp_path / 'nested' / 'uptime.db'}")
    with database.connection_context():
        assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert database.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 10000


@pytest.mark.postgres
def test_it_turns_off_parallel_workers_on_postgresql(pg_url: str) -> None:
    database = dbmod.connect_url(pg_url)
    try:
        with database.connection_context():
            value = database.execute_sql("SHOW max_parallel_workers_per_gather").fetchone()[0]
        assert value == "0"
    finally:
        database.close_all()


def test_sqlite_connections_are_pooled_with_their_pragmas_set_once(tmp_path: Any) -> None:
    database = dbmod.connect_url(f"sqlite:///{tmp_path / 'uptime.db'}")
    try:
        with database.connection_context():
            first = database.connection()
            database.execute_sql("PRAGMA foreign_keys = OFF")  # to tell a re-run PRAGMA apart
        with database.connection_context():
            assert database.connection() is first  # given back, taken again
            assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 0
    finally:
        database.close_all()


def test_a_prepared_query_answers_as_the_query_does(db: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from uptime_server.models import Session, User

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    alice = User.create(email="a@example.com", name="a", created_at=now)
    Session.create(
        user=alice,
        token_hash="h1",
        provider="local",
        created_at=now,
        expires_at=now + timedelta(hours=1),
    )
    prepared = dbmod.Prepared(
        lambda token, at: (
            Session.select(Session, User)
            .join(User)
            .where(Session.token_hash == token, Session.expires_at > at)
            .limit(1)
        )
    )
    row = prepared.first("h1", now)
    assert (row.token_hash, row.user.email, row.expires_at) == (
        "h1",
        "a@example.com",
        now + timedelta(hours=1),
    )
    assert prepared.first("h1", now + timedelta(hours=1)) is None  # the bound time counts
    assert prepared.first("h2", now) is None


def test_a_prepared_query_refuses_an_argument_a_field_converts(db: Any) -> None:
    from uptime_server.models import Monitor

    prepared = dbmod.Prepared(lambda headers: Monitor.select().where(Monitor.headers == headers))
    with pytest.raises(ValueError, match="converted or unused"):
        prepared.first("x")


def test_a_prepared_query_gives_every_row_each_time_with_its_own_values(db: Any) -> None:
    """``rows`` and ``first`` reuse the statement and the row layout worked out on the
    first run: later runs still convert each column and build each joined model."""
    from datetime import UTC, datetime, timedelta

    from uptime_server.models import Monitor, User

    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    alice = User.create(email="a@example.com", name="a", created_at=now)
    bob = User.create(email="b@example.com", name="b", created_at=now)
    teams = {u.id: create_personal_team(u, now=now) for u in (alice, bob)}
    for user, name in ((alice, "one"), (alice, "three"), (bob, "three")):
        Monitor.create(
            user=user,
            team=teams[user.id],
            name=name,
            url="http://127.0.0.1:9/",
            type="http",
            created_at=now,
            updated_at=now,
            last_check=now + timedelta(minutes=len(name)),
        )
    prepared = dbmod.Prepared(
        lambda user_id: (
            Monitor.select(Monitor, User)
            .join(User)
            .where(Monitor.user == user_id)
            .order_by(Monitor.id)
        )
    )
    for _ in range(3):
        mine, theirs = prepared.rows(alice.id), prepared.rows(bob.id)
        assert [(m.name, m.user.email, m.last_check) for m in mine] == [
            ("one", "a@example.com", now + timedelta(minutes=3)),
            ("three", "a@example.com", now + timedelta(minutes=5)),
        ]
        assert [(m.name, m.user.email) for m in theirs] == [("three", "b@example.com")]
        assert prepared.rows(-1) == [] and prepared.first(-1) is None
    as_dicts = dbmod.Prepared(
        lambda user_id: (
            Monitor.select(Monitor.name, Monitor.paused).where(Monitor.user == user_id).dicts()
        )
    )
    for _ in range(2):
        assert as_dicts.rows(bob.id) == [{"name": "three", "paused": False}]


def test_prepared_dicts_and_tuples_are_the_rows_peewee_gives(db: Any) -> None:
    """Dicts and tuples are read in one go, integer and text columns unconverted:
    every column type still comes back as peewee's own iteration gives it
    (booleans, aware UTC times, JSON, nulls, foreign keys, a joined column)."""
    from datetime import UTC, datetime

    from peewee import SQL

    from uptime_server.models import Monitor, User

    now = datetime(2026, 1, 1, 12, 30, 15, tzinfo=UTC)
    alice = User.create(email="a@example.com", name="a", created_at=now)
    team = create_personal_team(alice, now=now)
    for i, (paused, headers, last_check) in enumerate(
        ((True, {"X-A": "1"}, now), (False, {}, None), (False, {"B": "2"}, now))
    ):
        Monitor.create(
            user=alice,
            team=team,
            name=f"m{i}",
            url=None if i == 1 else f"http://127.0.0.1:9/{i}",
            type="http",
            paused=paused,
            headers=headers,
            response_time=None if i == 1 else 40 + i,
            created_at=now,
            updated_at=now,
            last_check=last_check,
        )
    columns = (
        Monitor.id,
        Monitor.user,
        Monitor.name,
        Monitor.url,
        Monitor.paused,
        Monitor.headers,
        Monitor.response_time,
        Monitor.last_check,
        User.email,
    )

    def build(user_id: int) -> Any:
        return (
            Monitor.select(*columns).join(User).where(Monitor.user == user_id).order_by(Monitor.id)
        )

    as_dicts = dbmod.Prepared(lambda user_id: build(user_id).dicts())
    as_tuples = dbmod.Prepared(lambda user_id: build(user_id).tuples())
    as_named = dbmod.Prepared(lambda user_id: build(user_id).namedtuples())
    for _ in range(2):  # the first run works out the layout, the second reuses it
        dicts = as_dicts.rows(alice.id)
        assert dicts == list(build(alice.id).dicts())
        assert as_tuples.rows(alice.id) == list(build(alice.id).tuples())
        assert as_named.rows(alice.id) == list(build(alice.id).namedtuples())
        assert as_dicts.rows(-1) == [] and as_tuples.rows(-1) == []
    assert [(d["paused"], d["headers"], d["last_check"]) for d in dicts] == [
        (True, {"X-A": "1"}, now),
        (False, {}, None),
        (False, {"B": "2"}, now),
    ]
    assert dicts[0]["last_check"].tzinfo is UTC
    assert [(type(d["id"]), type(d["paused"])) for d in dicts] == [(int, bool)] * 3

    # An expression named after a field is converted by that field (a NUMERIC
    # comes back from psycopg as a Decimal): that int() stays.
    summed = dbmod.Prepared(
        lambda user_id: (
            Monitor.select(SQL("CAST(SUM(response_time) AS NUMERIC)").alias("response_time"))
            .where(Monitor.user == user_id)
            .dicts()
        )
    )
    for _ in range(2):
        (total,) = summed.rows(alice.id)
        assert total == {"response_time": 82} and type(total["response_time"]) is int

    as_models = dbmod.Prepared(
        lambda user_id: Monitor.select().where(Monitor.user == user_id).order_by(Monitor.id)
    )
    for _ in range(2):
        models = as_models.rows(alice.id)
        expected = list(Monitor.select().where(Monitor.user == alice.id).order_by(Monitor.id))
        assert [(m.__data__, m._dirty, m.__rel__) for m in models] == [
            (m.__data__, m._dirty, m.__rel__) for m in expected
        ]
    assert models[0].user.email == "a@example.com"  # the foreign key still loads its row
    models[1].name = "renamed"
    assert models[1].dirty_fields == [Monitor.name]
    models[1].save()
    assert Monitor.get_by_id(models[1].id).name == "renamed"
    assert [(d["user"], d["email"], d["url"]) for d in dicts][1] == (
        alice.id,
        "a@example.com",
        None,
    )


def test_a_prepared_query_takes_lists_of_any_length(db: Any) -> None:
    from datetime import UTC, datetime

    from uptime_server.models import User

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ids = [
        User.create(email=f"u{i}@example.com", name=f"u{i}", created_at=now).id for i in range(4)
    ]
    prepared = dbmod.Prepared(
        lambda wanted, name: (
            User.select(User.id, User.name)
            .where(User.id.in_(wanted) & (User.name != name))
            .order_by(User.id)
            .tuples()
        )
    )
    assert prepared.rows(ids[:3], "u1") == [(ids[0], "u0"), (ids[2], "u2")]
    assert prepared.rows(ids[1:], "u1") == [(ids[2], "u2"), (ids[3], "u3")]  # same shape again
    assert prepared.rows([ids[3]], "nobody") == [(ids[3], "u3")]  # another length
    assert prepared.rows([], "nobody") == []
    assert prepared.first(ids, "u0") == (ids[1], "u1")


def test_a_prepared_query_takes_lists_for_in_and_builds_once_per_size(db: Any) -> None:
    from datetime import UTC, datetime

    from uptime_server.models import User

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ids = [
        User.create(email=f"u{i}@example.com", name=f"u{i}", created_at=now).id for i in range(4)
    ]
    built: list[int] = []

    def build(user_ids: list[int], name: str) -> Any:
        built.append(len(user_ids))
        query = User.select(User.id).where(User.id.in_(user_ids) & (User.name != name))
        return query.order_by(User.id).tuples()

    prepared = dbmod.Prepared(build)
    assert list(prepared.rows(ids[:3], "u1")) == [(ids[0],), (ids[2],)]
    assert list(prepared.rows([ids[3], ids[1], ids[0]], "u0")) == [(ids[1],), (ids[3],)]
    assert list(prepared.rows(ids, "none")) == [(i,) for i in ids]
    assert list(prepared.rows((ids[2],), "x")) == [(ids[2],)]
    assert built == [3, 4, 1]  # once per list length, not per call
    more = [
        User.create(email=f"w{i}@example.com", name=f"w{i}", created_at=now).id for i in range(12)
    ]
    assert list(prepared.rows(more[:9], "w0")) == [(i,) for i in more[1:9]]
    assert list(prepared.rows(more, "x")) == [(i,) for i in more]
    assert built == [3, 4, 1, 16]  # 9 and 12 ids: one text, padded to 16 values


def test_a_prepared_update_reports_the_rows_it_changed(db: Any) -> None:
    from datetime import UTC, datetime

    from uptime_server.models import User

    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ids = [User.create(email=f"v{i}@example.com", name="old", created_at=now).id for i in range(3)]
    rename = dbmod.Prepared(
        lambda name, user_ids: User.update(name=name).where(User.id.in_(user_ids))
    )
    assert rename.execute("new", ids[:2]) == 2
    assert rename.execute("newer", [ids[2], -1]) == 1
    names = {u.id: u.name for u in User.select()}
    assert [names[i] for i in ids] == ["new", "new", "newer"]


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("2026-01-02 03:04:05.123456", (2026, 1, 2, 3, 4, 5, 123456)),
        ("2026-01-02 03:04:05", (2026, 1, 2, 3, 4, 5, 0)),
        ("2026-01-02T03:04:05+02:00", (2026, 1, 2, 1, 4, 5, 0)),
        ("2026-01-02", (2026, 1, 2, 0, 0, 0, 0)),
        ("2026-01-02T03:04:05Z", (2026, 1, 2, 3, 4, 5, 0)),
        ("2026-01-02 03:04", (2026, 1, 2, 3, 4, 0, 0)),
        ("2026-01-02 03:04:05.5-01:30", (2026, 1, 2, 4, 34, 5, 500000)),
    ],
)
def test_a_stored_time_reads_as_aware_utc(stored: str, expected: tuple[int, ...]) -> None:
    from datetime import UTC, datetime

    from uptime_server.models import Monitor

    value = Monitor.last_check.python_value(stored)
    assert value == datetime(*expected, tzinfo=UTC)
    assert value.tzinfo is UTC
