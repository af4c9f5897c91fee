"""POST /api/v1/monitors: defaults and every validation rule of docs/api.md#monitor-fields."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only
from uptime_server.models import DEFAULT_EXPECTED_STATUS, MonitorLocation

URL = "/api/v1/monitors"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    locations = ",".join(["local"] + [f"loc{i}" for i in range(1, 11)])
    return {**settings_env, "UPTIME_LOCATIONS": locations}


def test_it_creates_with_the_defaults(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body())
    assert response.status_code == 201
    created = response.get_json()["data"]
    assert created == {
        "id": created["id"],
        "team_id": alice.user.personal_team_id,
        "name": "api",
        "url": "http://127.0.0.1:9/health",
        "type": "http",
        "status": "pending",
        "depends_on": [],
        "created_at": "2026-11-22T12:00:00Z",
    }
    monitor = alice.get(f"{URL}/{created['id']}").get_json()["data"]
    assert monitor == {
        "id": created["id"],
        "team_id": alice.user.personal_team_id,
        "name": "api",
        "url": "http://127.0.0.1:9/health",
        "type": "http",
        "method": "GET",
        "expected_status": DEFAULT_EXPECTED_STATUS,
        "timeout": 30,
        "check_interval": 60,
        "retry_count": 0,
        "locations": ["local"],
        "follow_redirects": True,
        "verify_ssl": True,
        "headers": {},
        "body": None,
        "expected_content": None,
        "excluded_content": None,
        "json_path": None,
        "expected_json_value": None,
        "degraded_response_time": None,
        "tls": False,
        "send": None,
        "expect": None,
        "query_name": None,
        "record_type": None,
        "resolver": None,
        "expected_rcode": None,
        "expected_values": None,
        "count": None,
        "max_packet_loss": None,
        "key": None,
        "tags": [],
        "depends_on": [],  # issue 32
        # Heartbeat fields (issue 13), null for other types.
        "period": None,
        "grace": None,
        "cron": None,
        "timezone": None,
        "ping_url": None,
        "next_deadline": None,
        "last_ping": None,
        "badges": False,
        "badge_token": None,
        "status": "pending",
        "flapping": False,
        "blocked": False,
        "blocked_by": [],
        "checks_supported": True,
        "paused": False,
        "paused_at": None,
        "pause_reason": None,
        "uptime_24h": None,
        "uptime_7d": None,
        "uptime_30d": None,
        "response_time": None,
        "status_code": None,
        "last_error": None,
        "last_check": None,
        "last_success": None,
        "last_failure": None,
        "cert_expires_at": None,
        "next_check_at": "2026-11-22T12:00:00Z",
        "created_at": "2026-11-22T12:00:00Z",
        "updated_at": "2026-11-22T12:00:00Z",
        # Location quorum (issue 17): no run yet, so not stale.
        "locations_status": [
            {"location": "local", "status": None, "checked_at": None, "stale": False}
        ],
        "stale_locations": [],
    }


def test_it_stores_every_field_given(alice: Any) -> None:
    body = monitor_body(
        type="https",
        url="https://example.com/status?full=1",
        method="post",
        expected_status=[200, 301],
        timeout=10,
        check_interval=120,
        retry_count=3,
        locations=["loc1", "local"],
        follow_redirects=False,
        verify_ssl=False,
        headers={"Authorization": "Bearer x", "X-Trace": ""},
        body='{"ping": true}',
        expected_content="ok",
        excluded_content="error",
        json_path="$.status",
        expected_json_value="up",
        degraded_response_time=1500,
    )
    mid = alice.post(URL, json=body).get_json()["data"]["id"]
    monitor = alice.get(f"{URL}/{mid}").get_json()["data"]
    expected = {**body, "method": "POST"}
    assert {k: monitor[k] for k in expected} == expected
    rows = MonitorLocation.select().where(MonitorLocation.monitor == mid)
    assert sorted(row.location for row in rows) == ["loc1", "local"]


def test_it_strips_the_name(alice: Any) -> None:
    mid = create(alice, name="  padded name \t")
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["name"] == "padded name"


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
@sqlite_only
def test_it_accepts_each_method_in_any_case(alice: Any, method: str) -> None:
    mid = create(alice, method=method.lower().capitalize())
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["method"] == method


# (field, value) pairs that are valid on their own.
VALID = [
    ("name", "x"),
    ("name", "n" * 200),
    ("name", " " + "n" * 200 + " "),
    ("timeout", 5),
    ("retry_count", 0),
    ("retry_count", 10),
    ("expected_status", [100]),
    ("expected_status", [599]),
    ("expected_status", list(range(200, 250))),
    ("locations", ["local"]),
    ("locations", ["local"] + [f"loc{i}" for i in range(1, 10)]),
    ("headers", {f"X-H{i}": "v" for i in range(50)}),
    ("headers", {"!#$%&'*+-.^_`|~09azAZ": "value with spaces: and\ttabs"}),
    ("body", "b" * 64 * 1024),
    ("body", None),
    ("expected_content", "c" * 1024),
    ("excluded_content", "c" * 1024),
    ("url", "http://127.0.0.1:8080/" + "p" * (2048 - len("http://127.0.0.1:8080/"))),
    ("url", "http://[::1]:8080/"),
    ("url", "https://example.com"),
    ("degraded_response_time", 1),
    ("degraded_response_time", None),
    ("json_path", "$.items[0].status"),
]


@pytest.mark.parametrize(("field", "value"), VALID)
def test_it_accepts_values_within_bounds(alice: Any, field: str, value: Any) -> None:
    response = alice.post(URL, json=monitor_body(**{field: value}))
    assert response.status_code == 201, response.get_json()


def test_it_accepts_timeout_and_interval_at_their_bounds(alice: Any) -> None:
    assert alice.post(URL, json=monitor_body(timeout=300, check_interval=300)).status_code == 201
    assert alice.post(URL, json=monitor_body(timeout=5, check_interval=5)).status_code == 201
    assert alice.post(URL, json=monitor_body(check_interval=86400)).status_code == 201


# (field, value) pairs that break one rule; the error names the field.
INVALID = [
    ("name", ""),
    ("name", "   "),
    ("name", "n" * 201),
    ("name", "tab\tinside"),
    ("name", "new\nline"),
    ("name", "del\x7f"),
    ("name", "nul\x00"),
    ("method", "FETCH"),
    ("method", ""),
    ("expected_status", []),
    ("expected_status", [99]),
    ("expected_status", [600]),
    ("expected_status", list(range(200, 251))),
    ("timeout", 4),
    ("timeout", 301),
    ("check_interval", 0),
    ("check_interval", 86401),
    ("retry_count", -1),
    ("retry_count", 11),
    ("locations", []),
    ("locations", ["mars"]),
    ("locations", ["local"] + [f"loc{i}" for i in range(1, 11)]),
    ("headers", {f"X-H{i}": "v" for i in range(51)}),
    ("headers", {"Bad Name": "v"}),
    ("headers", {"Bad:Name": "v"}),
    ("headers", {"": "v"}),
    ("headers", {"X-Inject": "a\r\nSet-Cookie: x=1"}),
    ("headers", {"X-Inject": "a\nb"}),
    ("headers", {"X-Inject": "a\rb"}),
    ("body", "b" * (64 * 1024 + 1)),
    ("body", "é" * (32 * 1024 + 1)),  # 64 KiB counts bytes, not characters
    ("body", "nul\x00"),
    ("expected_content", "c" * 1025),
    ("excluded_content", "c" * 1025),
    ("expected_content", "nul\x00"),
    ("json_path", "$["),
    ("json_path", "$.a[?(@.b ==]"),
    ("degraded_response_time", 0),
    ("degraded_response_time", 300_001),
    ("url", "ftp://example.com/"),
    ("url", "example.com/health"),
    ("url", "/relative/path"),
    ("url", "http://"),
    ("url", "http:///path-only"),
    ("url", "http://exa mple.com/"),
    ("url", " http://example.com/"),
    ("url", "http://example.com:99999/"),
    ("url", "http://example.com/" + "p" * 2048),
    ("url", "http://example.com/\x00"),
    ("url", None),
    ("url", ""),
]


@pytest.mark.parametrize(("field", "value"), INVALID)
@sqlite_only
def test_it_refuses_values_out_of_bounds(alice: Any, field: str, value: Any) -> None:
    response = alice.post(URL, json=monitor_body(**{field: value}))
    assert_error(response, 400, "VALIDATION_ERROR", field)
    assert alice.get(URL).get_json()["pagination"]["total"] == 0


# Strict types: nothing is coerced.
WRONG_TYPES = [
    ("name", 5),
    ("url", 5),
    ("method", ["GET"]),
    ("timeout", "30"),
    ("timeout", 30.0),
    ("timeout", True),
    ("check_interval", "60"),
    ("retry_count", None),
    ("expected_status", 200),
    ("expected_status", ["200"]),
    ("expected_status", [200.0]),
    ("expected_status", [True]),
    ("locations", "local"),
    ("follow_redirects", "true"),
    ("follow_redirects", 1),
    ("verify_ssl", None),
    ("headers", ["X-A: b"]),
    ("headers", {"X-A": 1}),
    ("body", {"a": 1}),
    ("degraded_response_time", "100"),
]


@pytest.mark.parametrize(("field", "value"), WRONG_TYPES)
@sqlite_only
def test_it_refuses_wrong_types(alice: Any, field: str, value: Any) -> None:
    assert_error(
        alice.post(URL, json=monitor_body(**{field: value})), 400, "VALIDATION_ERROR", field
    )


def test_it_names_unknown_fields(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body(colour="red", status="online"))
    error = assert_error(response, 400, "VALIDATION_ERROR", "colour", "status")
    assert error["details"]["colour"] == ["unknown field"]


def test_it_requires_name_and_type(alice: Any) -> None:
    response = alice.post(URL, json={"url": "http://127.0.0.1:9/"})
    error = assert_error(response, 400, "VALIDATION_ERROR", "name", "type")
    assert error["details"]["name"] == ["is required"]


@pytest.mark.parametrize("kind", ["http", "https"])
@sqlite_only
def test_it_requires_a_url_for_checked_types(alice: Any, kind: str) -> None:
    body = {"name": "no url", "type": kind}
    assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", "url")


def test_it_requires_https_for_type_https(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body(type="https", url="http://example.com/"))
    error = assert_error(response, 400, "VALIDATION_ERROR", "url")
    assert "https" in error["details"]["url"][0]
    assert alice.post(URL, json=monitor_body(type="http", url="https://x.test/")).status_code == 201


def test_it_refuses_a_timeout_longer_than_the_interval(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body(timeout=60, check_interval=30))
    assert_error(response, 400, "VALIDATION_ERROR", "timeout")
    # The default timeout (30) also counts against a short interval.
    response = alice.post(URL, json=monitor_body(check_interval=20))
    assert_error(response, 400, "VALIDATION_ERROR", "timeout")


def test_it_requires_json_path_for_expected_json_value(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body(expected_json_value="up"))
    assert_error(response, 400, "VALIDATION_ERROR", "expected_json_value")
    body = monitor_body(expected_json_value="up", json_path="$.status")
    assert alice.post(URL, json=body).status_code == 201


@pytest.mark.parametrize("kind", ["icmp", "HTTP", "smtp", ""])
@sqlite_only
def test_it_refuses_unknown_types(alice: Any, kind: str) -> None:
    response = alice.post(URL, json=monitor_body(type=kind))
    assert_error(response, 400, "INVALID_MONITOR_TYPE", "type")


def test_it_refuses_a_type_that_is_not_a_string(alice: Any) -> None:
    assert_error(alice.post(URL, json=monitor_body(type=5)), 400, "VALIDATION_ERROR", "type")


@pytest.mark.parametrize(("kind", "url"), [("ping", "ping://127.0.0.1"), ("dns", "dns://x.test")])
def test_it_schedules_ping_and_dns_monitors_as_pending(alice: Any, kind: str, url: str) -> None:
    # They were stored and never scheduled before issue 12 made them checked.
    response = alice.post(URL, json={"name": f"{kind} target", "type": kind, "url": url})
    assert response.status_code == 201
    mid = response.get_json()["data"]["id"]
    monitor = alice.get(f"{URL}/{mid}").get_json()["data"]
    assert monitor["status"] == "pending"
    assert monitor["checks_supported"] is True
    assert monitor["next_check_at"] is not None
    assert monitor["url"] == url
    assert MonitorLocation.select().where(MonitorLocation.monitor == mid).count() == 1
    listed = alice.get(URL).get_json()["data"]
    assert [(m["id"], m["type"], m["status"]) for m in listed] == [(mid, kind, "pending")]


def test_it_uses_the_server_minimum_interval(
    settings_env: dict[str, str], clock: Any, db: Any, alice: Any
) -> None:
    from tests.conftest import ApiUser
    from uptime_server.app import create_app
    from uptime_server.config import load_settings

    strict = load_settings({**settings_env, "UPTIME_MIN_CHECK_INTERVAL": "30"})
    app = create_app(strict, clock=clock, bind_database=False)
    user = ApiUser(app.test_client(), alice.token, alice.user)
    response = user.post(URL, json=monitor_body(timeout=5, check_interval=29))
    error = assert_error(response, 400, "VALIDATION_ERROR", "check_interval")
    assert "between 30 and 86400" in error["details"]["check_interval"][0]
    assert user.post(URL, json=monitor_body(timeout=5, check_interval=30)).status_code == 201


@pytest.mark.parametrize(
    "raw", [b"[]", b'"monitor"', b"42", b"null"], ids=["array", "string", "number", "null"]
)
@sqlite_only
def test_it_wants_a_json_object(alice: Any, raw: bytes) -> None:
    response = alice.post(URL, data=raw, content_type="application/json")
    assert_error(response, 400, "VALIDATION_ERROR", "body")


def test_it_wants_a_body(alice: Any) -> None:
    assert_error(alice.post(URL), 400, "INVALID_JSON")


def test_it_keeps_unicode(alice: Any) -> None:
    mid = create(alice, name="Zürich ✓ 東京", url="https://xn--e1afmkfd.xn--p1ai/")
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["name"] == "Zürich ✓ 東京"


def test_it_reports_a_bad_url_together_with_other_bad_fields(alice):
    r = alice.post(
        "/api/v1/monitors",
        json={"name": "bad", "type": "http", "url": "ftp://x", "timeout": 1},
    )
    assert r.status_code == 400
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
    assert set(r.json["error"]["details"]) == {"url", "timeout"}


# Bodies with several mistakes, of single fields and between fields: each is
# named in the one answer, and nothing that only follows from another.
SEVERAL_BAD = [
    ({"type": "http"}, {"name", "url"}),
    ({"type": "https", "name": ""}, {"name", "url"}),
    (monitor_body(method="FETCH", timeout=60, check_interval=30), {"method", "timeout"}),
    (
        monitor_body(retry_count=99, expected_json_value="up"),
        {"retry_count", "expected_json_value"},
    ),
    (
        monitor_body(name="", timeout=60, check_interval=30, expected_json_value="up", colour=1),
        {"name", "timeout", "expected_json_value", "colour"},
    ),
    (monitor_body(url="ftp://x", headers={"Host": "x"}, timeout=4), {"url", "headers", "timeout"}),
    # A bad json_path, interval or timeout is named once, not again through its rule.
    (monitor_body(json_path="$[", expected_json_value="up"), {"json_path"}),
    (monitor_body(timeout="60", check_interval=30), {"timeout"}),
    (monitor_body(timeout=60, check_interval="30"), {"check_interval"}),
]


@pytest.mark.parametrize(("body", "fields"), SEVERAL_BAD)
@sqlite_only
def test_it_names_every_bad_field_at_once(
    alice: Any, body: dict[str, Any], fields: set[str]
) -> None:
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR", *fields)
    assert set(error["details"]) == fields
    assert all(len(messages) == 1 for messages in error["details"].values())
    assert alice.get(URL).get_json()["pagination"]["total"] == 0


@sqlite_only
def test_an_unknown_type_is_named_with_the_other_bad_fields(alice: Any) -> None:
    response = alice.post(URL, json={"type": "smtp", "timeout": 1, "url": "x"})
    error = assert_error(response, 400, "INVALID_MONITOR_TYPE", "type", "name", "timeout")
    assert set(error["details"]) == {"type", "name", "timeout"}
    assert error["details"]["type"] == [
        "must be one of http, https, tcp, udp, ping, dns, heartbeat"
    ]


@pytest.mark.parametrize(
    "header", ["Host", "host", "Content-Length", "TRANSFER-ENCODING", "Connection"]
)
@sqlite_only
def test_it_refuses_headers_that_frame_the_request(alice: Any, header: str) -> None:
    headers = {"X-Fine": "1", header: "value"}
    error = assert_error(
        alice.post(URL, json=monitor_body(headers=headers)), 400, "VALIDATION_ERROR", "headers"
    )
    assert header in error["details"]["headers"][0]
    assert alice.get(URL).get_json()["pagination"]["total"] == 0
    mid = create(alice, headers={"X-Fine": "1"})
    response = alice.put(f"{URL}/{mid}", json={"headers": headers})
    assert_error(response, 400, "VALIDATION_ERROR", "headers")
    assert alice.get(f"{URL}/{mid}").get_json()["data"]["headers"] == {"X-Fine": "1"}
