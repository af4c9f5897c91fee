"""The maintenance resource: CRUD, validation, opening and ending by hand, the
``maintenance`` status and list filter, isolation between users, and bearer
tokens (docs/maintenance.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from tests.api.tokens import mint
from uptime_server.clock import isoformat
from uptime_server.maintenance.windows import active_monitor_ids, in_maintenance
from uptime_server.models import MaintenanceWindow

URL = "/api/v1/maintenance"


def window(user, **fields) -> dict:
    response = user.post(URL, json={"title": "deploy", **fields})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def status_of(user, mid: int) -> str:
    return user.get(f"/api/v1/monitors/{mid}").get_json()["data"]["status"]


def listed(user, status: str) -> list[int]:
    data = user.get(f"/api/v1/monitors?status={status}").get_json()["data"]
    return [m["id"] for m in data]


def test_one_off_window_life_cycle(alice, clock):
    mid = create(alice)
    start, end = clock.now() + timedelta(hours=1), clock.now() + timedelta(hours=2)
    w = window(alice, monitor_ids=[mid], starts_at=isoformat(start), ends_at=isoformat(end))
    assert (w["active"], w["next_starts_at"], w["active_until"]) == (False, isoformat(start), None)
    assert status_of(alice, mid) == "pending"
    clock.set(start)
    shown = alice.get(f"{URL}/{w['id']}").get_json()["data"]
    assert (shown["active"], shown["active_until"]) == (True, isoformat(end))
    assert status_of(alice, mid) == "maintenance"
    assert listed(alice, "maintenance") == [mid]
    assert listed(alice, "pending") == []
    clock.set(end)
    assert status_of(alice, mid) == "pending"
    assert listed(alice, "maintenance") == []
    assert [x["id"] for x in alice.get(URL).get_json()["data"]] == [w["id"]]
    assert alice.delete(f"{URL}/{w['id']}").status_code == 200
    assert_error(alice.get(f"{URL}/{w['id']}"), 404, "MAINTENANCE_NOT_FOUND")


def test_tags_cover_monitors_carrying_all_of_them(alice):
    both = create(alice, name="both", tags=["web", "eu"])
    web = create(alice, name="web", tags=["web"])
    w = window(alice, tags=["web", "eu"])
    alice.post(f"{URL}/{w['id']}/start")
    assert (status_of(alice, both), status_of(alice, web)) == ("maintenance", "pending")


def test_manual_start_for_a_while_and_end(alice, clock):
    mid = create(alice)
    w = window(alice, monitor_ids=[mid])  # no schedule: by hand only
    assert w["active"] is False and w["next_starts_at"] is None
    started = alice.post(f"{URL}/{w['id']}/start", json={"duration": 1800}).get_json()["data"]
    assert started["active"] is True
    assert started["active_until"] == isoformat(clock.now() + timedelta(seconds=1800))
    assert status_of(alice, mid) == "maintenance"
    clock.advance(1800)
    assert status_of(alice, mid) == "pending"
    # Open until ended: no body.
    assert alice.post(f"{URL}/{w['id']}/start").get_json()["data"]["active_until"] is None
    clock.advance(7 * 86400)
    assert status_of(alice, mid) == "maintenance"
    ended = alice.post(f"{URL}/{w['id']}/end").get_json()["data"]
    assert (ended["active"], ended["ended_at"]) == (False, isoformat(clock.now()))
    assert status_of(alice, mid) == "pending"


def test_end_cuts_short_the_scheduled_occurrence_only(alice, clock):
    mid = create(alice)
    w = window(alice, monitor_ids=[mid], cron="0 * * * *", duration=1800, timezone="UTC")
    clock.set(clock.now().replace(minute=10))
    assert alice.get(f"{URL}/{w['id']}").get_json()["data"]["active"] is True
    alice.post(f"{URL}/{w['id']}/end")
    assert status_of(alice, mid) == "pending"
    clock.set(clock.now().replace(minute=0) + timedelta(hours=1, minutes=5))
    assert status_of(alice, mid) == "maintenance"  # the next hour's occurrence


def test_edit_keeps_omitted_fields_and_replaces_the_schedule(alice, clock):
    mid = create(alice)
    start = clock.now() + timedelta(hours=1)
    w = window(
        alice,
        monitor_ids=[mid],
        starts_at=isoformat(start),
        ends_at=isoformat(start + timedelta(hours=1)),
    )
    edited = alice.put(f"{URL}/{w['id']}", json={"title": "db upgrade"}).get_json()["data"]
    assert (edited["title"], edited["starts_at"], edited["monitor_ids"]) == (
        "db upgrade",
        isoformat(start),
        [mid],
    )
    body = {"rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0;BYSECOND=0", "duration": 3600}
    edited = alice.put(f"{URL}/{w['id']}", json=body).get_json()["data"]
    assert (edited["starts_at"], edited["ends_at"], edited["rrule"]) == (None, None, body["rrule"])


@sqlite_only
def test_validation(alice, clock):
    mid = create(alice)
    now = isoformat(clock.now())
    cases = [
        ({"monitor_ids": [mid], "title": ""}, "title"),
        ({"title": "x"}, "monitor_ids"),
        ({"monitor_ids": [mid], "starts_at": now}, "ends_at"),
        ({"monitor_ids": [mid], "starts_at": now, "ends_at": now}, "ends_at"),
        ({"monitor_ids": [mid], "starts_at": "2026-01-01T00:00:00", "ends_at": now}, "starts_at"),
        ({"monitor_ids": [mid], "cron": "0 2 * * *"}, "duration"),
        ({"monitor_ids": [mid], "cron": "not cron", "duration": 60}, "cron"),
        ({"monitor_ids": [mid], "cron": "0 0 30 2 *", "duration": 60}, "cron"),
        ({"monitor_ids": [mid], "starts_at": "0001-01-01T00:00:00+01:00", "ends_at": now},
         "starts_at"),
        ({"monitor_ids": [mid], "rrule": "FREQ=SOMETIMES", "duration": 60}, "rrule"),
        ({"monitor_ids": [mid], "cron": "0 2 * * *", "duration": 60, "timezone": "Mars/X"},
         "timezone"),
        ({"monitor_ids": [mid], "duration": 60}, "duration"),
        ({"monitor_ids": [mid], "tags": ["Not A Tag!"]}, "tags"),
        ({"monitor_ids": [mid], "colour": "red"}, "colour"),
    ]  # fmt: skip
    for extra, field in cases:
        body = {"title": "w", **extra}
        assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", field)
    w = window(alice, monitor_ids=[mid])
    assert_error(
        alice.post(f"{URL}/{w['id']}/start", json={"duration": 0}),
        400,
        "VALIDATION_ERROR",
        "duration",
    )


def test_isolation_between_users(alice, bob):
    mine = create(alice)
    theirs = create(bob, tags=["web"])
    error = assert_error(
        alice.post(URL, json={"title": "x", "monitor_ids": [theirs]}),
        400,
        "VALIDATION_ERROR",
        "monitor_ids",
    )
    assert error["details"] == {"monitor_ids": [f"no such monitor: {theirs}"]}
    w = window(alice, monitor_ids=[mine], tags=["web"])
    alice.post(f"{URL}/{w['id']}/start")
    # Alice's tag covers her own monitors only.
    assert status_of(bob, theirs) == "pending"
    assert listed(bob, "maintenance") == []
    for method, path in (
        ("GET", f"{URL}/{w['id']}"),
        ("PUT", f"{URL}/{w['id']}"),
        ("DELETE", f"{URL}/{w['id']}"),
        ("POST", f"{URL}/{w['id']}/start"),
        ("POST", f"{URL}/{w['id']}/end"),
    ):
        response = bob.request(method, path, json={"title": "mine now"})
        assert_error(response, 404, "MAINTENANCE_NOT_FOUND")
    assert bob.get(URL).get_json()["data"] == []
    assert alice.get(f"{URL}/{w['id']}").get_json()["data"]["title"] == "deploy"


def test_a_write_token_opens_and_ends_a_window_a_read_token_cannot(alice):
    mid = create(alice)
    w = window(alice, monitor_ids=[mid])
    reader = mint(alice, "read")
    assert_error(reader.post(f"{URL}/{w['id']}/start"), 403, "FORBIDDEN")
    assert reader.get(f"{URL}/{w['id']}").status_code == 200
    writer = mint(alice, "write")
    assert writer.post(f"{URL}/{w['id']}/start", json={"duration": 600}).status_code == 200
    assert status_of(alice, mid) == "maintenance"
    assert writer.post(f"{URL}/{w['id']}/end").status_code == 200
    assert status_of(alice, mid) == "pending"


@pytest.mark.parametrize(
    "schedule",
    [{"cron": "0 2 * * *"}, {"rrule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=0;BYSECOND=0"}],
    ids=["cron", "rrule"],
)
def test_a_recurring_window_follows_berlin_time_across_dst(alice, clock, schedule):
    mid = create(alice)
    clock.set(datetime(2026, 3, 27, 12, tzinfo=UTC))
    window(alice, monitor_ids=[mid], duration=3600, timezone="Europe/Berlin", **schedule)
    # 02:00-03:00 in Berlin: 01:00-02:00 UTC before 29 March, 00:00-01:00 UTC after.
    for at, expected in (
        (datetime(2026, 3, 28, 1, 30, tzinfo=UTC), "maintenance"),
        (datetime(2026, 3, 28, 0, 30, tzinfo=UTC), "pending"),
        (datetime(2026, 3, 30, 0, 30, tzinfo=UTC), "maintenance"),
        (datetime(2026, 3, 30, 1, 30, tzinfo=UTC), "pending"),
    ):
        clock.set(at)
        assert status_of(alice, mid) == expected, at


@sqlite_only
def test_schedules_that_would_stall_the_server_are_refused(alice, clock):
    """Issue 29: opening twice within an hour, at no time in the next 10 years, a DTSTART
    over a year old, or a rule too costly to evaluate: VALIDATION_ERROR naming the field."""
    mid = create(alice)
    refused = [
        ({"rrule": "FREQ=SECONDLY"}, "rrule"),
        ({"rrule": "FREQ=MINUTELY;INTERVAL=30"}, "rrule"),
        ({"rrule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=0,30"}, "rrule"),
        ({"cron": "* * * * *"}, "cron"),
        ({"cron": "*/30 2 * * *"}, "cron"),
        ({"cron": "0,59 * * * *"}, "cron"),
        ({"rrule": "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30"}, "rrule"),  # never
        ({"rrule": "FREQ=DAILY;UNTIL=20200101T000000"}, "rrule"),  # over
        ({"rrule": "DTSTART:21000101T000000\nRRULE:FREQ=DAILY"}, "rrule"),  # too far ahead
        ({"rrule": "DTSTART:19700101T000000\nRRULE:FREQ=SECONDLY"}, "rrule"),
        ({"rrule": "DTSTART:20251101T020000\nRRULE:FREQ=DAILY"}, "rrule"),  # > 1 year back
        ({"rrule": "FREQ=SECONDLY;BYHOUR=2;BYMINUTE=0;BYSECOND=0"}, "rrule"),  # too costly
        ({"rrule": "FREQ=DAILY;COUNT=1000000"}, "rrule"),  # give UNTIL
    ]
    for schedule, field in refused:
        body = {"title": "w", "monitor_ids": [mid], "duration": 600, **schedule}
        response = alice.post(URL, json=body)
        assert_error(response, 400, "VALIDATION_ERROR", field, only=True)
    accepted = [
        {"cron": "0 * * * *"},  # an hour apart is enough
        {"rrule": "FREQ=HOURLY"},
        {"rrule": "FREQ=MINUTELY;INTERVAL=60"},
        {"rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"},  # next in 2028
        {"rrule": "DTSTART:20260601T020000\nRRULE:FREQ=DAILY"},  # under a year back
        {"rrule": "FREQ=DAILY;COUNT=30"},
    ]
    for schedule in accepted:
        window(alice, monitor_ids=[mid], duration=600, **schedule)
    assert len(alice.get(URL).get_json()["data"]) == len(accepted)  # nothing refused was kept


@sqlite_only
def test_an_edit_checks_a_new_schedule_and_keeps_an_aged_one(alice, clock):
    mid = create(alice)
    w = window(alice, monitor_ids=[mid], duration=600, rrule="FREQ=DAILY;BYHOUR=2")
    response = alice.put(f"{URL}/{w['id']}", json={"cron": "*/5 * * * *", "duration": 600})
    assert_error(response, 400, "VALIDATION_ERROR", "cron", only=True)
    assert alice.get(f"{URL}/{w['id']}").get_json()["data"]["rrule"] == "FREQ=DAILY;BYHOUR=2"
    # Stored two years ago with its DTSTART then: an edit of the title keeps it.
    aged = "DTSTART:20241122T020000\nRRULE:FREQ=DAILY"
    MaintenanceWindow.update(rrule=aged).where(MaintenanceWindow.id == w["id"]).execute()
    edited = alice.put(f"{URL}/{w['id']}", json={"title": "nightly"})
    assert edited.status_code == 200, edited.get_json()
    assert (edited.get_json()["data"]["rrule"], edited.get_json()["data"]["title"]) == (
        aged,
        "nightly",
    )
    again = alice.put(f"{URL}/{w['id']}", json={"rrule": aged, "duration": 600})
    assert_error(again, 400, "VALIDATION_ERROR", "rrule", only=True)


def test_the_recorders_question_follows_the_same_rule(alice, bob, clock):
    """``in_maintenance`` (per batch of monitors) agrees with ``active_monitor_ids``:
    monitor_ids, all of the tags, the owner's monitors only."""
    both = create(alice, name="both", tags=["web", "eu"])
    web = create(alice, name="web", tags=["web"])
    listed_one = create(alice, name="listed")
    other = create(alice, name="other")
    theirs = create(bob, name="theirs", tags=["web", "eu"])
    w = window(alice, tags=["web", "eu"], monitor_ids=[listed_one])
    alice.post(f"{URL}/{w['id']}/start")
    ids = [both, web, listed_one, other, theirs]
    now = clock.now()
    assert in_maintenance(now, ids) == {both, listed_one}
    assert active_monitor_ids(now, [alice.user.id, bob.user.id]) & set(ids) == {both, listed_one}
    alice.put(f"/api/v1/monitors/{web}", json={"tags": ["web", "eu"]})
    assert in_maintenance(now, ids) == {both, web, listed_one}  # tags read at each question
    alice.post(f"{URL}/{w['id']}/end")
    assert in_maintenance(now, ids) == set()
