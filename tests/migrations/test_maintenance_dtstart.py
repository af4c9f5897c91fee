"""0017: windows whose RRULE DTSTART is over a year old start at a recent date of the same phase."""

from __future__ import annotations

import importlib
import itertools
from datetime import UTC, datetime, timedelta

import pytest
from dateutil.rrule import rrulestr

from uptime_server import migrations

step = importlib.import_module("uptime_server.migrations.0017_maintenance_dtstart")

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def occurrences(text: str, lo: datetime, hi: datetime) -> list[datetime]:
    rule = rrulestr(text, ignoretz=True, forceset=True)
    return list(itertools.takewhile(lambda t: t < hi, rule.xafter(lo, inc=True)))


@pytest.mark.parametrize(
    "text",
    [
        "DTSTART:20190101T020000\nRRULE:FREQ=DAILY",
        "DTSTART:20190101T020000\nRRULE:FREQ=DAILY;BYHOUR=2,14;BYMINUTE=30",
        "DTSTART:20180104T020000\nRRULE:FREQ=WEEKLY;INTERVAL=2",
        "DTSTART:20180104T020000\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR;WKST=SU",
        "DTSTART:20200101T013000\nRRULE:FREQ=HOURLY;INTERVAL=5",
        "DTSTART:20150131T020000\nRRULE:FREQ=MONTHLY",
        "DTSTART:20150131T020000\nRRULE:FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR",
        "DTSTART:20120229T030000\nRRULE:FREQ=YEARLY",
        "DTSTART:20100101T000000\nRRULE:FREQ=YEARLY;INTERVAL=5",
        "DTSTART:20200101T000000\nFREQ=DAILY;UNTIL=20270101T000000",
    ],
)
def test_the_moved_rule_has_the_same_dates_from_91_days_ago_on(text: str) -> None:
    moved = step.moved_rule(text, "Europe/Berlin", NOW)
    assert moved is not None and moved != text
    local_now = NOW.astimezone(step.ZoneInfo("Europe/Berlin")).replace(tzinfo=None)
    new_start = rrulestr(moved, ignoretz=True, forceset=True)._rrule[0]._dtstart
    old_start = rrulestr(text, ignoretz=True, forceset=True)._rrule[0]._dtstart
    assert old_start < new_start <= local_now - timedelta(days=91)
    lo, hi = local_now - timedelta(days=91), local_now + timedelta(days=400)
    assert occurrences(moved, lo, hi) == occurrences(text, lo, hi)


def test_a_short_period_moves_within_the_last_year() -> None:
    moved = step.moved_rule("DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY", "UTC", NOW)
    assert moved == "DTSTART:20251122T120000\nRRULE:FREQ=SECONDLY"


@pytest.mark.parametrize(
    "text",
    [
        "FREQ=DAILY",  # no DTSTART: anchored at the window's creation
        "DTSTART:20260101T000000\nRRULE:FREQ=DAILY",  # recent enough
        "DTSTART:20190101T000000\nRRULE:FREQ=DAILY;COUNT=5",  # counts from its DTSTART
        "DTSTART:20190101T000000\nRRULE:FREQ=DAILY\nEXDATE:20190102T000000",
        "DTSTART:20190101T000000\nRRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY",
        "DTSTART:not a date\nRRULE:FREQ=DAILY",
    ],
)
def test_rules_it_leaves_alone(text: str) -> None:
    assert step.moved_rule(text, "UTC", NOW) is None


def test_the_migration_rewrites_old_rules_and_nothing_else(blank_db):
    db = blank_db()
    migrations.migrate(db, until=16)
    texts = {
        "old": "DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY",
        "berlin": "DTSTART:20190101T020000\nRRULE:FREQ=DAILY",
        "count": "DTSTART:20190101T020000\nRRULE:FREQ=DAILY;COUNT=3",
        "none": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
    }
    created = datetime(2018, 5, 1)
    p = db.param
    # Rows written as the schema of 0016 has them (the models are newer).
    db.execute_sql(
        'INSERT INTO "users" ("email", "name", "created_at", "is_admin") '
        f"VALUES ({p}, {p}, {p}, {p})",
        ("a@example.com", "A", created, False),
    )
    (user_id,) = db.execute_sql('SELECT MAX("id") FROM "users"').fetchone()
    ids = {}
    rows = {
        **{n: (t, None, "[]") for n, t in texts.items()},
        "cron": (None, "0 2 * * *", '["web"]'),
    }
    for name, (rrule, cron_text, tags) in rows.items():
        db.execute_sql(
            'INSERT INTO "maintenance_windows" ("user_id", "title", "monitor_ids", "tags", '
            '"rrule", "cron", "duration", "timezone", "created_at", "updated_at") '
            f"VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p}, {p})",
            (user_id, name, "[1]", tags, rrule, cron_text, 3600, "Europe/Berlin", created, created),
        )
        (ids[name],) = db.execute_sql('SELECT MAX("id") FROM "maintenance_windows"').fetchone()

    assert migrations.migrate(db, until=17) == ["0017_maintenance_dtstart"]

    def column(name: str, window: str) -> str:
        sql = f'SELECT "{name}" FROM "maintenance_windows" WHERE "id" = {p}'
        return db.execute_sql(sql, (ids[window],)).fetchone()[0]

    stored = {name: column("rrule", name) for name in ids if name != "cron"}
    assert column("cron", "cron") == "0 2 * * *"
    now = datetime.now(UTC).astimezone(step.ZoneInfo("Europe/Berlin")).replace(tzinfo=None)
    for name in ("old", "berlin"):
        line, rule = stored[name].split("\n")
        start = datetime.strptime(line.removeprefix("DTSTART:"), "%Y%m%dT%H%M%S")
        assert now - timedelta(days=366) <= start <= now - timedelta(days=90), name
        assert rule == texts[name].split("\n")[1]
    assert stored["berlin"].split("\n")[0].endswith("T020000")  # the same time of day
    assert (stored["count"], stored["none"]) == (texts["count"], texts["none"])
