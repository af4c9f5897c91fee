"""Monitors of every type: each type's fields are validated, stored and shown.

A field of another type is refused by name when the client sends it (with a
value other than its default); the stored configuration's defaults never
count. Nothing here opens a connection: the test app runs no scheduler.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from tests.conftest import ApiUser
from uptime_server.models import Monitor

URL = "/api/v1/monitors"
TCP = {"name": "db", "type": "tcp", "url": "tcp://127.0.0.1:5432"}


def _get(user: Any, mid: int) -> dict[str, Any]:
    return user.get(f"{URL}/{mid}").get_json()["data"]


def test_a_tcp_monitor_is_stored_shown_and_checked(alice: Any) -> None:
    body = {**TCP, "tls": True, "verify_ssl": False, "send": "PING\\r\\n", "expect": "+PONG"}
    mid = create(alice, **body)
    shown = _get(alice, mid)
    assert {k: shown[k] for k in body} == body
    assert shown["checks_supported"] is True
    assert shown["next_check_at"] is not None
    assert (shown["query_name"], shown["count"]) == (None, None)


def test_dns_ping_and_udp_fields_are_stored_and_checked(alice: Any) -> None:
    # Issue 12 made these types checked (they were stored but not checked).
    dns = {
        "name": "dns",
        "type": "dns",
        "url": None,
        "query_name": "example.test",
        "record_type": "MX",
        "resolver": "[::1]:5353",
        "expected_rcode": "nxdomain",
        "expected_values": ["10 mail.example.test"],
    }
    shown = _get(alice, create(alice, **dns))
    assert {k: shown[k] for k in dns} == {**dns, "expected_rcode": "NXDOMAIN"}
    assert shown["checks_supported"] is True
    assert shown["next_check_at"] is not None
    ping = {
        "name": "ping",
        "type": "ping",
        "url": "ping://127.0.0.1",
        "count": 5,
        "max_packet_loss": 20,
    }
    shown = _get(alice, create(alice, **ping))
    assert (shown["count"], shown["max_packet_loss"]) == (5, 20.0)
    assert shown["checks_supported"] is True
    udp = {
        "name": "udp",
        "type": "udp",
        "url": "udp://127.0.0.1:53",
        "send": "\\x00",
        "expect": "x",
    }
    shown = _get(alice, create(alice, **udp))
    assert (shown["send"], shown["checks_supported"]) == ("\\x00", True)


def test_a_dns_monitor_names_its_query_by_url_or_query_name(alice: Any) -> None:
    base = {"name": "dns", "type": "dns"}
    by_url = _get(alice, create(alice, **base, url="dns://example.test"))
    assert (by_url["url"], by_url["query_name"]) == ("dns://example.test", None)
    both = _get(alice, create(alice, **base, url="dns://Example.test.", query_name="example.test"))
    assert both["query_name"] == "example.test"
    error = assert_error(alice.post(URL, json=base), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"url"}
    body = {**base, "url": "dns://a.test", "query_name": "b.test"}
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"query_name"}


@pytest.mark.parametrize(
    ("kind", "url"),
    [
        ("dns", "example.test"),
        ("dns", "dns://example.test/path"),
        ("dns", "dns://a b"),
        ("dns", "dns://example.test:53"),
        ("ping", "127.0.0.1"),
        ("ping", "ping://"),
        ("ping", "ping://127.0.0.1:7"),
        ("ping", "ping://0.0.0.0"),
        ("ping", "ping://[::]"),
        ("ping", "ping://169.254.169.254"),
    ],
)
@sqlite_only
def test_dns_and_ping_urls_are_validated(alice: Any, kind: str, url: str) -> None:
    body = {"name": "n", "type": kind, "url": url}
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"url"}


@sqlite_only
def test_a_ping_monitor_needs_a_url(alice: Any) -> None:
    error = assert_error(
        alice.post(URL, json={"name": "p", "type": "ping"}), 400, "VALIDATION_ERROR"
    )
    assert error["details"] == {"url": ["is required for http, https, tcp, udp and ping monitors"]}


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5432/",
        "tcp://127.0.0.1",
        "tcp://127.0.0.1:0",
        "tcp://127.0.0.1:65536",
        "tcp://127.0.0.1:22/path",
        "tcp://user@127.0.0.1:22",
        "tcp://:22",
        "udp://127.0.0.1:22",
    ],
)
@sqlite_only
def test_a_tcp_url_must_be_host_and_port(alice: Any, url: str) -> None:
    error = assert_error(alice.post(URL, json={**TCP, "url": url}), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"url"}


@sqlite_only
def test_a_tcp_monitor_needs_a_url(alice: Any) -> None:
    error = assert_error(alice.post(URL, json={**TCP, "url": None}), 400, "VALIDATION_ERROR")
    assert error["details"] == {"url": ["is required for http, https, tcp, udp and ping monitors"]}


@sqlite_only
def test_every_bad_field_is_named_at_once(alice: Any) -> None:
    body = {
        **TCP,
        "method": "POST",  # http only
        "expected_status": [201],  # http only
        "count": 3,  # ping only
        "query_name": "x.test",  # dns only
        "send": "bad \\q escape",
        "expect": "x" * 1025,
        "timeout": 1,
    }
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")
    details = error["details"]
    assert set(details) == {
        "method",
        "expected_status",
        "count",
        "query_name",
        "send",
        "expect",
        "timeout",
    }
    assert details["method"] == ["applies only to http, https monitors"]
    assert details["count"] == ["applies only to ping monitors"]
    assert "escape" in details["send"][0]
    assert Monitor.select().count() == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("count", 0),
        ("count", 11),
        ("count", "3"),
        ("max_packet_loss", -1),
        ("max_packet_loss", 100.5),
        ("record_type", "ANY"),
        ("record_type", "a"),
        ("expected_values", [f"v{i}" for i in range(21)]),
        ("expected_values", [""]),
        ("expected_rcode", "NO ERROR"),
        ("expected_rcode", "NOSUCHRCODE"),
        ("query_name", "not a name"),
        ("resolver", "dns server"),
        ("resolver", "1.1.1.1:0"),
        ("resolver", "169.254.169.254"),
        ("resolver", "[::]:53"),
        ("query_name", "x" * 254),
    ],
)
@sqlite_only
def test_type_fields_have_bounds(alice: Any, field: str, value: Any) -> None:
    kind = "ping" if field in ("count", "max_packet_loss") else "dns"
    url = "ping://127.0.0.1" if kind == "ping" else "dns://example.test"
    body = {"name": "n", "type": kind, "url": url, field: value}
    if field == "query_name":  # with a url too, a bad name would also disagree with it
        del body["url"]
    error = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {field}


@sqlite_only
def test_a_default_value_of_another_types_field_is_not_refused(alice: Any) -> None:
    # A client that always sends every field with its default means nothing by it.
    mid = create(alice, **TCP, method="GET", follow_redirects=True, body=None, count=None)
    assert _get(alice, mid)["type"] == "tcp"


def test_an_update_drops_the_fields_of_the_old_type(alice: Any) -> None:
    mid = create(alice, name="api", type="http", url="http://127.0.0.1:9/", method="POST")
    response = alice.put(f"{URL}/{mid}", json={"type": "tcp", "url": "tcp://127.0.0.1:9"})
    assert response.status_code == 200, response.get_json()
    row = Monitor.get_by_id(mid)
    assert (row.type, row.method, row.url) == ("tcp", "GET", "tcp://127.0.0.1:9")
    # The stored http defaults never count as sent; the tcp fields change alone.
    response = alice.put(f"{URL}/{mid}", json={"expect": "OK"})
    assert response.status_code == 200, response.get_json()
    error = assert_error(
        alice.put(f"{URL}/{mid}", json={"headers": {"X": "1"}}), 400, "VALIDATION_ERROR"
    )
    assert error["details"] == {"headers": ["applies only to http, https monitors"]}


@pytest.fixture
def guarded(settings: Any, clock: Any, db: Any, alice: ApiUser) -> ApiUser:
    """Alice on an app with private targets blocked (a shared instance)."""
    from uptime_server.app import create_app

    app = create_app(
        settings.with_overrides(block_private_targets=True), clock=clock, bind_database=False
    )
    return ApiUser(app.test_client(), alice.token, alice.user)


@pytest.mark.parametrize("url", ["tcp://0.0.0.0:22", "tcp://[::]:22", "tcp://169.254.169.254:80"])
@sqlite_only
def test_a_tcp_target_the_guard_never_allows_is_refused(alice: Any, url: str) -> None:
    error = assert_error(alice.post(URL, json={**TCP, "url": url}), 400, "VALIDATION_ERROR")
    assert "never" in error["details"]["url"][0]


@sqlite_only
def test_a_private_tcp_target_is_refused_when_blocked(guarded: Any) -> None:
    error = assert_error(guarded.post(URL, json=TCP), 400, "VALIDATION_ERROR", "url")
    assert "UPTIME_BLOCK_PRIVATE_TARGETS" in error["details"]["url"][0]
    resolver = {"name": "dns", "type": "dns", "url": "dns://x.test", "resolver": "127.0.0.1:53"}
    assert_error(guarded.post(URL, json=resolver), 400, "VALIDATION_ERROR", "resolver")
    ping = {"name": "ping", "type": "ping", "url": "ping://127.0.0.1"}
    assert_error(guarded.post(URL, json=ping), 400, "VALIDATION_ERROR", "url")


@pytest.mark.parametrize(
    ("kind", "target", "stored"),
    [
        ("tcp", "127.0.0.1:5432", "tcp://127.0.0.1:5432"),
        ("tcp", "db.example.test:22", "tcp://db.example.test:22"),
        ("tcp", "[::1]:5432", "tcp://[::1]:5432"),
        ("udp", "127.0.0.1:53", "udp://127.0.0.1:53"),
        ("udp", "[::1]:161", "udp://[::1]:161"),
    ],
)
def test_a_tcp_or_udp_target_may_be_host_port(
    alice: Any, kind: str, target: str, stored: str
) -> None:
    response = alice.post(URL, json={"name": "t", "type": kind, "url": target})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["data"]["url"] == stored
    mid = response.get_json()["data"]["id"]
    assert _get(alice, mid)["url"] == stored
    # An update takes it too, judged against the monitor's type.
    moved = alice.put(f"{URL}/{mid}", json={"url": target.replace("5", "6", 1)})
    assert moved.get_json()["data"]["url"] == stored.replace("5", "6", 1)


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("127.0.0.1", "the port is missing"),
        ("[::1]", "the port is missing"),
        ("db.example.test:", "the port is missing"),
        ("127.0.0.1:0", "port must be between 1 and 65535"),
        ("127.0.0.1:70000", "port must be between 1 and 65535"),
        ("127.0.0.1:http", "port must be between 1 and 65535"),
        ("::1:5432", "IPv6 address in brackets"),
        ("[127.0.0.1]:22", "only an IPv6 address goes in brackets"),
        ("bad host:22", "must be tcp://host:port or host:port"),
        ("tcp://127.0.0.1", "must be tcp://host:port"),
    ],
)
def test_a_host_port_target_without_a_valid_port_is_refused(
    alice: Any, target: str, words: str
) -> None:
    response = alice.post(URL, json={"name": "t", "type": "tcp", "url": target})
    error = assert_error(response, 400, "VALIDATION_ERROR", "url", only=True)
    assert words in error["details"]["url"][0]
    mid = create(alice, **TCP)
    response = alice.put(f"{URL}/{mid}", json={"url": target})
    assert_error(response, 400, "VALIDATION_ERROR", "url", only=True)
    assert _get(alice, mid)["url"] == TCP["url"]


def test_host_port_is_not_an_http_url(alice: Any) -> None:
    response = alice.post(URL, json={"name": "t", "type": "http", "url": "127.0.0.1:8080"})
    assert_error(response, 400, "VALIDATION_ERROR", "url")


def test_dns_and_ping_show_their_effective_defaults(alice: Any, clock: Any) -> None:
    dns = create(alice, name="dns", type="dns", url="dns://example.test")
    ping = create(alice, name="ping", type="ping", url="ping://127.0.0.1")
    shown = _get(alice, dns)
    assert (shown["expected_rcode"], shown["count"], shown["max_packet_loss"]) == (
        "NOERROR",
        None,  # ping's fields stay null on a dns monitor
        None,
    )
    shown = _get(alice, ping)
    assert (shown["count"], shown["max_packet_loss"], shown["expected_rcode"]) == (3, 0, None)
    # As stored: an edit of something else changes nothing else.
    updated = alice.put(f"{URL}/{ping}", json={"name": "ping-2"}).get_json()["data"]
    assert (updated["count"], updated["max_packet_loss"]) == (3, 0)
    # A change of type takes the new type's defaults and drops the old type's.
    moved = alice.put(f"{URL}/{dns}", json={"type": "ping", "url": "ping://127.0.0.1"})
    data = moved.get_json()["data"]
    assert (data["expected_rcode"], data["count"], data["max_packet_loss"]) == (None, 3, 0)


def test_a_row_stored_without_them_reads_with_the_defaults(alice: Any) -> None:
    dns = create(alice, name="dns", type="dns", url="dns://example.test")
    ping = create(alice, name="ping", type="ping", url="ping://127.0.0.1")
    # As an older release stored them.
    Monitor.update(expected_rcode=None).where(Monitor.id == dns).execute()
    Monitor.update(count=None, max_packet_loss=None).where(Monitor.id == ping).execute()
    assert _get(alice, dns)["expected_rcode"] == "NOERROR"
    assert (_get(alice, ping)["count"], _get(alice, ping)["max_packet_loss"]) == (3, 0)
    # Applying the same monitors finds nothing to change.
    entries = alice.get(f"{URL}/export").get_json()["data"]["monitors"]
    assert entries == [
        {"name": "dns", "type": "dns", "url": "dns://example.test"},
        {"name": "ping", "type": "ping", "url": "ping://127.0.0.1"},
    ]
    plan = alice.post(f"{URL}/apply", json={"monitors": entries, "dry_run": True})
    assert plan.get_json()["data"]["summary"]["unchanged"] == 2, plan.get_json()


def test_the_openapi_document_names_every_type_field(anon: Any) -> None:
    schemas = anon.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    fields = {"tls", "send", "expect", "query_name", "record_type", "resolver"}
    fields |= {"expected_rcode", "expected_values", "count", "max_packet_loss"}
    assert fields <= set(schemas["Monitor"]["properties"])
    assert fields <= set(schemas["MonitorCreate"]["properties"])
    assert schemas["MonitorCreate"]["properties"]["type"]["enum"] == [
        "http",
        "https",
        "tcp",
        "udp",
        "ping",
        "dns",
        "heartbeat",
    ]


@sqlite_only
def test_every_bad_dns_and_ping_field_is_named_at_once(alice: Any) -> None:
    body = {
        "name": "dns",
        "type": "dns",
        "url": "dns://a.test",
        "query_name": "b.test",  # disagrees with url
        "expected_rcode": "BOGUS",
        "record_type": "ANY",
        "resolver": "0.0.0.0",
        "timeout": 120,  # over check_interval
    }
    details = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")["details"]
    assert set(details) == {"query_name", "expected_rcode", "record_type", "resolver", "timeout"}
    body = {"name": "p", "type": "ping", "url": "ping://0.0.0.0", "count": 0, "send": "x"}
    details = assert_error(alice.post(URL, json=body), 400, "VALIDATION_ERROR")["details"]
    assert set(details) == {"url", "count", "send"}
    assert Monitor.select().count() == 0
