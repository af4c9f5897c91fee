"""A monitor URL whose host is an IP literal the SSRF guard refuses is refused at once.

Create, update and bulk update answer VALIDATION_ERROR naming the url
(docs/api.md#outbound-safety), so no check ever dials it. Nothing here opens a connection:
the test app runs no scheduler, and every refusal happens at validation.
Host names are accepted: they are judged at run time, on what DNS returns.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only
from tests.conftest import ApiUser
from uptime_server.models import Monitor

URL = "/api/v1/monitors"

# Refused whatever the settings (link-local, unspecified, multicast, reserved),
# in the spellings the guard unwraps: numeric, hex, IPv4-mapped, NAT64.
ALWAYS_REFUSED = [
    "http://169.254.169.254/latest/meta-data/",
    "https://user:secret@169.254.169.254:443/",
    "http://2852039166/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://0.0.0.0:8080/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
]
# Allowed by default, refused with UPTIME_BLOCK_PRIVATE_TARGETS.
PRIVATE = [
    "http://10.0.0.1/",
    "http://127.0.0.1:9/",
    "http://127.1:9/",
    "http://[::1]:9/",
    "http://192.168.1.1/",
    "http://172.16.0.1/",
    "http://100.64.0.1/",
    "http://[fd00::1]/",
]
NAMES = ["http://localhost:9/", "http://db.internal/", "http://metadata.google.internal/"]


@pytest.fixture
def guarded(settings: Any, clock: Any, db: Any, alice: ApiUser) -> ApiUser:
    """Alice on an app with private targets blocked (a shared instance)."""
    from uptime_server.app import create_app

    app = create_app(
        settings.with_overrides(block_private_targets=True), clock=clock, bind_database=False
    )
    return ApiUser(app.test_client(), alice.token, alice.user)


def _refused(response: Any) -> str:
    error = assert_error(response, 400, "VALIDATION_ERROR", "url")
    assert set(error["details"]) == {"url"}
    return error["details"]["url"][0]


@pytest.mark.parametrize("url", ALWAYS_REFUSED)
@sqlite_only
def test_it_refuses_an_address_never_allowed(alice: Any, url: str) -> None:
    assert "never" in _refused(alice.post(URL, json=monitor_body(url=url)))
    mid = create(alice)
    assert "never" in _refused(alice.put(f"{URL}/{mid}", json={"url": url}))
    assert [m.url for m in Monitor.select()] == ["http://127.0.0.1:9/health"]


def test_it_refuses_one_for_https_monitors_and_in_bulk_too(alice: Any) -> None:
    url = "https://169.254.169.254/"
    _refused(alice.post(URL, json=monitor_body(type="https", url=url)))
    mid = create(alice)
    body = {"action": "update", "monitor_ids": [mid], "settings": {"url": url}}
    error = assert_error(alice.post(f"{URL}/bulk", json=body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"settings.url"}
    assert Monitor.get_by_id(mid).url == "http://127.0.0.1:9/health"


@pytest.mark.parametrize("url", PRIVATE + NAMES)
@sqlite_only
def test_private_addresses_and_names_are_allowed_by_default(alice: Any, url: str) -> None:
    response = alice.post(URL, json=monitor_body(url=url))
    assert response.status_code == 201, response.get_json()


@pytest.mark.parametrize("url", PRIVATE)
@sqlite_only
def test_it_refuses_private_addresses_when_they_are_blocked(guarded: Any, url: str) -> None:
    message = _refused(guarded.post(URL, json=monitor_body(url=url)))
    assert "UPTIME_BLOCK_PRIVATE_TARGETS" in message
    mid = create(guarded, url="http://db.internal/")
    _refused(guarded.put(f"{URL}/{mid}", json={"url": url}))
    assert Monitor.get_by_id(mid).url == "http://db.internal/"


@pytest.mark.parametrize("url", NAMES)
@sqlite_only
def test_names_are_left_to_run_time_when_private_targets_are_blocked(
    guarded: Any, url: str
) -> None:
    response = guarded.post(URL, json=monitor_body(url=url))
    assert response.status_code == 201, response.get_json()


def test_a_refused_url_is_named_with_the_other_bad_fields(guarded: Any) -> None:
    body = monitor_body(url="http://10.0.0.1/", timeout=1, headers={"Connection": "close"})
    error = assert_error(guarded.post(URL, json=body), 400, "VALIDATION_ERROR")
    assert set(error["details"]) == {"url", "timeout", "headers"}
