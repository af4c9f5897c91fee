"""/api/v1/notifications: active, recent, list, detail (docs/api.md#notifications)."""

from __future__ import annotations

import pytest

from tests.api.shapes import assert_error
from tests.notify.world import make_monitor
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Notification

NOTIFICATION_FIELDS = {
    "id",
    "team_id",
    "monitor_id",
    "monitor_name",
    "monitor_url",
    "type",
    "message",
    "status",
    "started_at",
    "resolved_at",
    "duration",
    "notification_method",
    "acknowledged",
    "acknowledged_at",
    "acknowledged_by",
    "resolved_by",
    "email_sent_at",
    "error_details",
    "suppressed_by",
}


@pytest.fixture
def checks(settings, clock):
    """checks(monitor, "down", "down", "up", ...): record runs a minute apart."""
    recorder = Recorder(settings)

    def run(monitor, *results, **kw):
        for result in results:
            recorder.record([outcome(monitor, clock, result == "up", **kw)], now=clock.now())
            clock.advance(60)

    return run


@pytest.fixture
def api_prod(alice, settings, clock):
    return make_monitor(
        alice.user, settings, clock, url="https://deploy:s3cret@api.example.com/health"
    )


def test_active_is_empty_with_meta(alice):
    r = alice.get("/api/v1/notifications/active")
    assert r.status_code == 200
    assert r.json == {"data": [], "meta": {"count": 0, "timestamp": "2026-11-22T12:00:00Z"}}


def test_an_outage_shows_as_active_with_every_field(alice, api_prod, checks):
    checks(api_prod, "down", "down")
    r = alice.get("/api/v1/notifications/active")
    assert r.json["meta"] == {"count": 1, "timestamp": "2026-11-22T12:02:00Z"}
    [item] = r.json["data"]
    assert item == {
        "id": item["id"],
        "team_id": alice.user.personal_team_id,
        "monitor_id": api_prod.id,
        "monitor_name": "api-prod",
        "monitor_url": "https://deploy:s3cret@api.example.com/health",
        "type": "downtime",
        "message": "api-prod is DOWN: expected status in [200], got 503",
        "status": "active",
        "started_at": "2026-11-22T12:00:00Z",
        "resolved_at": None,
        "duration": None,
        "notification_method": "email",
        "acknowledged": False,
        "acknowledged_at": None,
        "acknowledged_by": None,
        "resolved_by": None,
        "email_sent_at": None,
        "error_details": {
            "status_code": 503,
            "response_time": 45,
            "error_message": "expected status in [200], got 503",
        },
        "suppressed_by": None,
    }
    detail = alice.get(f"/api/v1/notifications/{item['id']}")
    assert detail.status_code == 200
    # One notification shows, besides, where its messages stand.
    shown = detail.json["data"]
    deliveries = shown.pop("deliveries")
    assert shown == item
    assert deliveries == [
        {
            "channel_id": None,
            "channel_name": None,
            "channel_type": "email",
            "event": "alert",
            "status": "pending",
            "attempts": 0,
            "last_error": None,
            "next_attempt_at": "2026-11-22T12:00:00Z",
            "sent_at": None,
        }
    ]


def test_recovery_resolves_and_adds_a_resolved_recovery(alice, api_prod, checks):
    checks(api_prod, "down", "down", "down", "up")
    assert alice.get("/api/v1/notifications/active").json["data"] == []
    recovery, downtime = alice.get("/api/v1/notifications").json["data"]
    assert (downtime["status"], downtime["resolved_at"], downtime["duration"]) == (
        "resolved",
        "2026-11-22T12:03:00Z",
        180,
    )
    assert recovery == {
        **recovery,
        "type": "recovery",
        "status": "resolved",
        "message": "api-prod is UP again after 3m",
        "started_at": "2026-11-22T12:00:00Z",
        "resolved_at": "2026-11-22T12:03:00Z",
        "duration": 180,
        "error_details": {"status_code": 200, "response_time": 120, "error_message": ""},
    }
    assert set(recovery) == NOTIFICATION_FIELDS


# --- recent ---------------------------------------------------------------------------


def test_recent_covers_the_last_24_hours_newest_first(alice, api_prod, checks, clock):
    checks(api_prod, "down", "up")  # started 12:00, a day and more ago
    clock.advance(hours=24)
    checks(api_prod, "down", "up", "down")
    r = alice.get("/api/v1/notifications/recent")
    assert r.status_code == 200
    assert [(n["type"], n["started_at"]) for n in r.json["data"]] == [
        ("downtime", "2026-11-23T12:04:00Z"),
        ("recovery", "2026-11-23T12:02:00Z"),
        ("downtime", "2026-11-23T12:02:00Z"),
    ]
    assert r.json["pagination"] == {"page": 1, "limit": 50, "total": 3, "has_next": False}
    r = alice.get("/api/v1/notifications/recent?page=1&limit=2")
    assert r.json["pagination"] == {"page": 1, "limit": 2, "total": 3, "has_next": True}
    r = alice.get("/api/v1/notifications/recent?page=2&limit=2")
    assert r.json["pagination"] == {"page": 2, "limit": 2, "total": 3, "has_next": False}
    assert len(r.json["data"]) == 1


@pytest.mark.parametrize(
    "query,param",
    [("limit=101", "limit"), ("limit=0", "limit"), ("page=0", "page"), ("page=x", "page")],
)
def test_recent_rejects_bad_paging(alice, query, param):
    r = alice.get(f"/api/v1/notifications/recent?{query}")
    assert_error(r, 400, "VALIDATION_ERROR", param, only=True)


# --- list -----------------------------------------------------------------------------


@pytest.fixture
def history(alice, settings, clock, checks):
    """Two monitors: a (3 outages, last one open) and b (one closed outage)."""
    a = make_monitor(alice.user, settings, clock, name="a")
    b = make_monitor(alice.user, settings, clock, name="b")
    checks(a, "down", "up")
    checks(b, "down", "up")
    checks(a, "down", "up", "down")
    return a, b


def test_list_defaults_and_pagination(alice, history):
    r = alice.get("/api/v1/notifications")
    assert r.status_code == 200
    assert r.json["pagination"] == {
        "page": 1,
        "limit": 50,
        "total": 7,
        "pages": 1,
        "has_next": False,
        "has_prev": False,
    }
    starts = [n["started_at"] for n in r.json["data"]]
    assert starts == sorted(starts, reverse=True)
    assert all(set(n) == NOTIFICATION_FIELDS for n in r.json["data"])

    r = alice.get("/api/v1/notifications?page=2&limit=3")
    assert r.json["pagination"] == {
        "page": 2,
        "limit": 3,
        "total": 7,
        "pages": 3,
        "has_next": True,
        "has_prev": True,
    }
    assert len(r.json["data"]) == 3
    r = alice.get("/api/v1/notifications?page=9&limit=3")
    assert r.json["data"] == [] and r.json["pagination"]["pages"] == 3


def test_list_filters(alice, history):
    a, b = history

    def ids(query):
        r = alice.get(f"/api/v1/notifications?{query}")
        assert r.status_code == 200, r.json
        return [(n["monitor_name"], n["type"], n["status"]) for n in r.json["data"]]

    assert ids(f"monitor_id={b.id}") == [
        ("b", "recovery", "resolved"),
        ("b", "downtime", "resolved"),
    ]
    assert ids("type=recovery") == [
        ("a", "recovery", "resolved"),
        ("b", "recovery", "resolved"),
        ("a", "recovery", "resolved"),
    ]
    assert ids("status=active") == [("a", "downtime", "active")]
    assert ids(f"monitor_id={a.id}&type=downtime&status=resolved") == [
        ("a", "downtime", "resolved"),
        ("a", "downtime", "resolved"),
    ]
    assert ids("since=2026-11-22T12:04:00Z") == [
        ("a", "downtime", "active"),
        ("a", "recovery", "resolved"),
        ("a", "downtime", "resolved"),
    ]
    assert ids("since=2026-11-22T13:04:00%2B01:00") == ids("since=2026-11-22T12:04:00Z")
    assert ids("monitor_id=999999") == []


@pytest.mark.parametrize(
    "query,param",
    [
        ("type=incident", "type"),
        ("status=open", "status"),
        ("monitor_id=abc", "monitor_id"),
        ("monitor_id=0", "monitor_id"),
        ("since=yesterday", "since"),
        ("since=2026-13-01T00:00:00Z", "since"),
        ("limit=101", "limit"),
        ("limit=-1", "limit"),
        ("page=0", "page"),
    ],
)
def test_list_rejects_bad_parameters_naming_them(alice, query, param):
    r = alice.get(f"/api/v1/notifications?{query}")
    assert_error(r, 400, "VALIDATION_ERROR", param, only=True)


def test_unknown_query_parameters_are_ignored(alice):
    assert alice.get("/api/v1/notifications?colour=blue").status_code == 200


# --- isolation ------------------------------------------------------------------------


def test_other_users_notifications_are_invisible(alice, bob, api_prod, checks):
    checks(api_prod, "down")
    note = Notification.get()
    for path in ("/api/v1/notifications", "/api/v1/notifications/recent"):
        assert bob.get(path).json["data"] == []
        assert len(alice.get(path).json["data"]) == 1
    assert bob.get("/api/v1/notifications/active").json["meta"]["count"] == 0
    assert bob.get(f"/api/v1/notifications?monitor_id={api_prod.id}").json["data"] == []
    for method, path in (
        ("GET", f"/api/v1/notifications/{note.id}"),
        ("POST", f"/api/v1/notifications/{note.id}/acknowledge"),
        ("POST", f"/api/v1/notifications/{note.id}/resolve"),
    ):
        r = bob.request(method, path)
        assert r.status_code == 404
        assert r.json["error"]["code"] == "NOTIFICATION_NOT_FOUND"
    assert Notification.get().status == "active" and not Notification.get().acknowledged


def test_unknown_id_is_not_found(alice):
    for method, suffix in (("GET", ""), ("POST", "/acknowledge"), ("POST", "/resolve")):
        r = alice.request(method, f"/api/v1/notifications/424242{suffix}")
        assert r.status_code == 404
        assert r.json["error"] == {
            "code": "NOTIFICATION_NOT_FOUND",
            "message": "Notification not found",
            "details": {},
        }


def test_a_session_is_required(anon):
    for path in (
        "/api/v1/notifications",
        "/api/v1/notifications/active",
        "/api/v1/notifications/1",
    ):
        r = anon.get(path)
        assert r.status_code == 401 and r.json["error"]["code"] == "UNAUTHORIZED"


def test_a_deleted_monitor_takes_its_notifications_along(alice, api_prod, checks):
    checks(api_prod, "down")
    assert alice.delete(f"/api/v1/monitors/{api_prod.id}").status_code == 200
    assert alice.get("/api/v1/notifications").json["pagination"]["total"] == 0
    assert alice.get("/api/v1/notifications/active").json["data"] == []
    assert Notification.select().count() == 0


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("notification_id", [INT64_MAX, 2**63, 10**30])
def test_ids_beyond_64_bits_are_not_found(alice, notification_id):
    for method, suffix in (("GET", ""), ("POST", "/acknowledge"), ("POST", "/resolve")):
        r = alice.request(method, f"/api/v1/notifications/{notification_id}{suffix}")
        assert r.status_code == 404, r.json
        assert r.json["error"]["code"] == "NOTIFICATION_NOT_FOUND"


@pytest.mark.parametrize("path", ["/api/v1/notifications", "/api/v1/notifications/recent"])
@pytest.mark.parametrize("page", [10**17, INT64_MAX])
def test_a_page_past_every_row_is_empty(alice, history, path, page):
    # The offset (page - 1) * limit would not fit the database's integers.
    r = alice.get(f"{path}?page={page}&limit=100")
    assert r.status_code == 200, r.json
    assert r.json["data"] == []
    assert r.json["pagination"]["page"] == page
    assert r.json["pagination"]["total"] == 7
    assert r.json["pagination"]["has_next"] is False


@pytest.mark.parametrize("path", ["/api/v1/notifications", "/api/v1/notifications/recent"])
def test_a_page_beyond_64_bits_is_a_validation_error(alice, path):
    r = alice.get(f"{path}?page={2**63}")
    assert r.status_code == 400
    assert r.json["error"]["details"] == {"page": [f"must be between 1 and {INT64_MAX}"]}


def test_the_monitor_filter_takes_any_64_bit_id(alice, history):
    r = alice.get(f"/api/v1/notifications?monitor_id={INT64_MAX}")
    assert r.status_code == 200 and r.json["data"] == []
    r = alice.get(f"/api/v1/notifications?monitor_id={2**63}")
    assert r.status_code == 400 and set(r.json["error"]["details"]) == {"monitor_id"}


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"])
def test_a_since_outside_the_calendar_in_utc_is_a_validation_error(alice, since):
    r = alice.get("/api/v1/notifications", query_string={"since": since})
    assert r.status_code == 400
    assert r.json["error"]["details"] == {
        "since": ["must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"]
    }


def test_a_since_at_either_end_of_the_calendar_is_accepted(alice, history):
    r = alice.get("/api/v1/notifications", query_string={"since": "0001-01-01T00:00:00Z"})
    assert r.json["pagination"]["total"] == 7
    r = alice.get("/api/v1/notifications", query_string={"since": "9999-12-31T23:59:59Z"})
    assert r.json["pagination"]["total"] == 0
