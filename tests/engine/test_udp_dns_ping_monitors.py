"""udp, dns and ping monitors through the whole engine: API, scheduler, probe, recorder.

As test_tcp_monitor: time comes from the ManualClock, ``settle()`` waits for
the real checks and the writer. Every target is on 127.0.0.1, started here
(the test settings leave private targets allowed, as a self-hosted user on
loopback would set them).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.engine.conftest import step
from tests.engine.test_udp_probe import UdpServer
from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import ProbeConfig, Prober
from uptime_server.engine.probes.udp import PORT_UNREACHABLE
from uptime_server.models import CheckRun, Notification


def create(alice, **body):
    body = {"timeout": 5, "check_interval": 10, **body}
    response = alice.post("/api/v1/monitors", json=body)
    assert response.status_code == 201, response.json
    return response.json["data"]["id"]


def shown(alice, mid):
    return alice.get(f"/api/v1/monitors/{mid}").json["data"]


def statuses(mid):
    return [r.status for r in CheckRun.select().where(CheckRun.monitor == mid)]


def test_a_udp_monitor_goes_online_then_offline_when_the_server_stops(alice, clock, scheduler):
    server = UdpServer()
    url = f"udp://127.0.0.1:{server.port}"
    mid = create(alice, name="syslog", type="udp", url=url, send="ping\\n", expect="echo:")
    try:
        step(clock, scheduler, 10)
        now = shown(alice, mid)
        assert (now["status"], now["last_error"], now["status_code"]) == ("online", None, None)
        assert now["response_time"] is not None
        assert server.received == [b"ping\n"]
    finally:
        server.close()

    for _ in range(2):
        step(clock, scheduler, 10)
    now = shown(alice, mid)
    assert (now["status"], now["last_error"]) == ("offline", PORT_UNREACHABLE)
    assert statuses(mid)[0] == "online" and set(statuses(mid)[1:]) == {"offline"}
    [incident] = Notification.select().where(Notification.monitor == mid)
    assert (incident.type, incident.status) == ("downtime", "active")


def test_a_dns_monitor_goes_online_then_offline_on_a_wrong_answer(
    alice, clock, scheduler, dns_server
):
    body = {
        "name": "mx",
        "type": "dns",
        "url": "dns://example.test",
        "record_type": "MX",
        "resolver": dns_server.address,
        "expected_values": ["10 mail.example.test"],
    }
    mid = create(alice, **body)
    asked_before = len(dns_server.queries_for("example.test."))  # a server per session
    step(clock, scheduler, 10)
    now = shown(alice, mid)
    assert (now["status"], now["last_error"], now["status_code"]) == ("online", None, None)
    asked = dns_server.queries_for("example.test.")[asked_before:]
    assert asked == [("udp", "example.test.", "MX")]

    changed = alice.put(f"/api/v1/monitors/{mid}", json={"expected_values": ["30 other.test"]})
    assert changed.status_code == 200, changed.json
    for _ in range(2):
        step(clock, scheduler, 10)
    now = shown(alice, mid)
    assert (now["status"], now["last_error"]) == (
        "offline",
        'expected value "30 other.test" not in the answer',
    )
    assert statuses(mid)[0] == "online" and set(statuses(mid)[1:]) == {"offline"}


def test_a_dns_monitor_by_query_name_takes_the_defaults(alice, clock, scheduler, dns_server):
    # record_type A, rcode NOERROR, no values: an NXDOMAIN answer fails.
    body = {"name": "a", "type": "dns", "query_name": "nothere.example.test"}
    mid = create(alice, **body, resolver=dns_server.address)
    asked_before = len(dns_server.queries_for("nothere.example.test."))
    step(clock, scheduler, 10)
    now = shown(alice, mid)
    assert (now["status"], now["last_error"]) == (
        "offline",
        "expected rcode NOERROR, got NXDOMAIN",
    )
    asked = dns_server.queries_for("nothere.example.test.")[asked_before:]
    assert asked and set(asked) == {("udp", "nothere.example.test.", "A")}


def test_a_ping_monitor_of_loopback_goes_online(alice, clock, scheduler):
    mid = create(alice, name="self", type="ping", url="ping://127.0.0.1", count=2)
    step(clock, scheduler, 10)
    now = shown(alice, mid)
    assert (now["status"], now["last_error"], now["status_code"]) == ("online", None, None)
    assert now["response_time"] is not None


@pytest.mark.parametrize(
    ("kind", "url", "error"),
    [
        ("udp", "udp://127.0.0.1", "invalid monitor: must be udp://host:port"),
        ("dns", "", "invalid monitor: url must be dns://host"),
        ("ping", "icmp://127.0.0.1", "invalid monitor: url must be ping://host"),
    ],
)
def test_a_bad_stored_target_is_a_failed_run_not_an_exception(kind, url, error):
    async def go():
        async with Prober(ProbeConfig(block_private=False)) as prober:
            return await prober.run(CheckSpec(url=url, type=kind, timeout=5))

    result = asyncio.run(go())
    assert (result.passed, result.error) == (False, error)


@pytest.mark.parametrize(
    ("kind", "url", "options"),
    [
        ("udp", "udp://127.0.0.1:9", {}),
        ("dns", "dns://example.test", {"resolver": "127.0.0.1:53"}),
        ("ping", "ping://127.0.0.1", {}),
    ],
)
def test_the_prober_s_private_target_setting_reaches_each_type(kind, url, options):
    async def go():
        async with Prober(ProbeConfig(block_private=True)) as prober:
            return await prober.run(CheckSpec(url=url, type=kind, options=options, timeout=5))

    result = asyncio.run(go())
    assert (result.passed, result.error) == (False, "target address not allowed")
