"""Pings of unknown tokens are limited per client address (UPTIME_UNKNOWN_PING_RATE_LIMIT)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.heartbeats.conftest import make_heartbeat, ping_path
from uptime_server.models import CheckRun

pytestmark = sqlite_only

ATTACKER = {"REMOTE_ADDR": "192.0.2.66"}
JOB_HOST = {"REMOTE_ADDR": "192.0.2.10"}


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_UNKNOWN_PING_RATE_LIMIT": "3/minute"}


def made_up(n: int) -> str:
    return f"/ping/made-up-token-{n:03d}"


def test_an_address_past_its_budget_of_unknown_tokens_gets_429(alice: Any, anon: Any) -> None:
    for n in range(2):
        assert_error(anon.get(made_up(n), environ_base=ATTACKER), 404, "NOT_FOUND")
    too_long = "/ping/" + "t" * 200  # refused without a lookup, and counted all the same
    assert_error(anon.get(too_long, environ_base=ATTACKER), 404, "NOT_FOUND")
    refused = anon.get(made_up(3), environ_base=ATTACKER)
    assert_error(refused, 429, "RATE_LIMIT_EXCEEDED")
    assert int(refused.headers["Retry-After"]) >= 0
    assert refused.headers["X-RateLimit-Limit"] == "3"
    # Whatever the kind or method.
    assert_error(anon.post(made_up(4) + "/fail", environ_base=ATTACKER), 429, "RATE_LIMIT_EXCEEDED")
    # Refused before any lookup: its known tokens too, until the window ends.
    known = make_heartbeat(alice)
    assert_error(anon.get(ping_path(known), environ_base=ATTACKER), 429, "RATE_LIMIT_EXCEEDED")
    assert CheckRun.select().count() == 0


def test_other_addresses_and_their_tokens_are_untouched(alice: Any, anon: Any) -> None:
    jobs = [make_heartbeat(alice, name=f"job-{n}") for n in range(3)]
    for n in range(10):
        anon.get(made_up(n), environ_base=ATTACKER)
    assert_error(anon.get(made_up(99), environ_base=ATTACKER), 429, "RATE_LIMIT_EXCEEDED")
    for job in jobs:
        assert anon.get(ping_path(job), environ_base=JOB_HOST).status_code == 200
        assert anon.post(ping_path(job, "log"), environ_base=JOB_HOST).status_code == 200
    assert CheckRun.select().count() == 6
    # Known tokens do not spend the budget; the job host still has its own.
    assert_error(anon.get(made_up(100), environ_base=JOB_HOST), 404, "NOT_FOUND")


def test_the_flask_route_counts_and_refuses_alike(anon: Any) -> None:
    def chunked(n: int) -> Any:  # a chunked body is handed to Flask's route
        return anon.post(
            made_up(n) + "/log",
            input_stream=io.BytesIO(b"x"),
            headers={"Transfer-Encoding": "chunked"},
            environ_base=ATTACKER,
        )

    for n in range(3):
        assert_error(chunked(n), 404, "NOT_FOUND")
    assert_error(chunked(3), 429, "RATE_LIMIT_EXCEEDED")
    assert_error(anon.get(made_up(4), environ_base=ATTACKER), 429, "RATE_LIMIT_EXCEEDED")
