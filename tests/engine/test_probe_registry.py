"""The probe interface: one attempt function per checked type, dispatched by type."""

from __future__ import annotations

import asyncio

from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import Prober
from uptime_server.engine.probes.registry import ATTEMPTS
from uptime_server.engine.spec import check_spec
from uptime_server.models import CHECKED_TYPES, MONITOR_TYPES


def test_the_claimed_types_are_the_registered_ones():
    assert set(ATTEMPTS) == set(CHECKED_TYPES)
    assert set(CHECKED_TYPES) <= set(MONITOR_TYPES)


def test_an_unregistered_type_fails_its_attempt_without_raising():
    async def go():
        async with Prober() as prober:
            return await prober.run(CheckSpec(url="gopher://x", type="gopher", timeout=5))

    # Every stored type is registered (above); the prober still never raises.
    result = asyncio.run(go())
    assert (result.passed, result.error) == (False, "gopher monitors are not checked")


def test_check_spec_puts_the_type_fields_in_options():
    row = {
        "url": "tcp://db.example:5432",
        "type": "tcp",
        "timeout": 5,
        "check_interval": 60,
        "follow_redirects": True,
        "verify_ssl": False,
        "tls": True,
        "send": "PING\\r\\n",
        "expect": "PONG",
        "query_name": "ignored.example",
    }
    spec = check_spec(row)
    assert spec.type == "tcp"
    assert dict(spec.options) == {"tls": True, "send": "PING\\r\\n", "expect": "PONG"}
    assert spec.verify_ssl is False
    assert check_spec({**row, "type": "http", "url": "http://x/"}).options == {}
