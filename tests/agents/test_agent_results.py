"""What an agent may say in a result, and how often it may call (issue 29, items 7, 12, 16).

A result is the agent's word: its time must fit its claim, its figures what
the server's own engine could have produced, its text printable and bounded.
Anything else is refused per result, and the rest of the batch is recorded.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from tests.api.shapes import assert_error
from uptime_server import db
from uptime_server.checks.rules import ERROR_LIMIT
from uptime_server.clock import isoformat
from uptime_server.models import AgentBatch, CheckRun, Monitor

LEASE = 15  # UPTIME_LEASE_SECONDS by default


def _claim(agent: Any, **body: Any) -> list[dict[str, Any]]:
    response = agent.post("/claims", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def _result(claim: dict[str, Any], checked_at: str, **more: Any) -> dict[str, Any]:
    return {
        "monitor_id": claim["monitor_id"],
        "lease_owner": claim["lease_owner"],
        "checked_at": checked_at,
        "passed": False,
        "response_time": 12,
        "status_code": 503,
        "error": "expected status in [200], got 503",
        **more,
    }


def _post(agent: Any, results: list[dict[str, Any]], batch_id: str | None = None) -> Any:
    body = {"batch_id": batch_id or uuid.uuid4().hex, "results": results}
    response = agent.post("/results", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _claims_of(agent: Any, make_monitor: Any, clock: Any, n: int, **fields: Any) -> list[dict]:
    for i in range(n):
        make_monitor(f"m{i}", locations=["eu-west"], check_interval=60, **fields)
    clock.advance(61)
    claims = _claim(agent)
    assert len(claims) == n
    return sorted(claims, key=lambda c: c["monitor_id"])


def _runs(monitor_id: int) -> list[CheckRun]:
    with db.database.connection_context():
        return list(CheckRun.select().where(CheckRun.monitor == monitor_id))


def test_checked_at_must_carry_a_zone_and_fit_its_claim(agent, make_monitor, clock):
    claims = _claims_of(agent, make_monitor, clock, 5)
    now = clock.now()
    results = [
        _result(claims[0], now.replace(tzinfo=None).isoformat()),  # no zone
        _result(claims[1], isoformat(now + timedelta(seconds=61))),  # the future
        _result(claims[2], isoformat(_due(claims[2]) - timedelta(seconds=LEASE + 1))),
        _result(claims[3], now.astimezone(timezone(timedelta(hours=2))).isoformat()),
        _result(claims[4], isoformat(now + timedelta(seconds=59))),  # a clock a bit ahead
    ]

    answer = _post(agent, results)

    reasons = [(r["status"], r["reason"]) for r in answer["results"]]
    assert reasons == [
        ("refused", "checked_at_not_aware"),
        ("refused", "checked_at_out_of_range"),
        ("refused", "checked_at_out_of_range"),
        ("recorded", None),
        ("recorded", None),
    ]
    assert (answer["recorded"], answer["refused"]) == (2, 3)
    for claim in claims[:3]:
        assert _runs(claim["monitor_id"]) == []
    [run] = _runs(claims[3]["monitor_id"])
    assert run.checked_at == now  # stored in UTC
    with db.database.connection_context():
        assert Monitor.get_by_id(claims[0]["monitor_id"]).status == "pending"


def test_response_time_is_cut_to_the_timeout_and_error_is_printable_and_bounded(
    agent, make_monitor, clock
):
    [claim] = _claims_of(agent, make_monitor, clock, 1, timeout=5)
    noisy = "\x1b[2J\x1b]0;pwned\x07line\r\nnext\x00" + "x" * 5000

    _post(agent, [_result(claim, isoformat(clock.now()), response_time=3_600_000, error=noisy)])

    [run] = _runs(claim["monitor_id"])
    assert run.response_time == 5000
    assert len(run.error) == ERROR_LIMIT and run.error.endswith("…")
    assert run.error.startswith("[2J]0;pwnedline  next" + "x")
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in run.error)
    with db.database.connection_context():
        assert Monitor.get_by_id(claim["monitor_id"]).last_error == run.error


def test_only_batches_that_recorded_something_are_kept(agent, make_agent, make_monitor, clock):
    [claim] = _claims_of(agent, make_monitor, clock, 1)
    stranger = make_agent()
    nothing = [_result(claim, isoformat(clock.now()))]

    first = _post(stranger, nothing, "nothing-1")  # not its lease
    again = _post(stranger, nothing, "nothing-1")
    junk = [_post(stranger, nothing, f"junk-{i}") for i in range(5)]

    assert first["recorded"] == 0 and first["results"][0]["reason"] == "not_yours"
    assert again["duplicate"] is False and again["results"] == first["results"]
    assert all(a["recorded"] == 0 for a in junk)
    with db.database.connection_context():
        assert AgentBatch.select().count() == 0
    recorded = _post(agent, nothing, "real-1")
    repeated = _post(agent, nothing, "real-1")
    assert recorded["recorded"] == 1 and repeated["duplicate"] is True
    with db.database.connection_context():
        assert [b.batch_id for b in AgentBatch.select()] == ["real-1"]


def test_an_oversized_error_no_longer_refuses_the_whole_batch(agent, make_monitor, clock):
    claims = _claims_of(agent, make_monitor, clock, 2)
    results = [_result(c, isoformat(clock.now()), error="e" * 10_000) for c in claims]
    assert _post(agent, results)["recorded"] == 2


@pytest.mark.parametrize(
    ("extra_env", "block"),
    [({"UPTIME_BLOCK_PRIVATE_TARGETS": "true"}, True), ({}, False)],
)
def test_each_claim_says_the_servers_private_target_policy(agent, make_monitor, clock, block):
    # A monitor of a name, not an IP literal: those are refused at create already.
    [claim] = _claims_of(agent, make_monitor, clock, 1, url="http://localhost:9/")
    assert claim["block_private_targets"] is block
    assert "block_private" not in claim["spec"]


# -- the rate limit per agent token -------------------------------------------------


@pytest.mark.parametrize(
    "extra_env", [{"UPTIME_AGENT_RATE_LIMIT": "3/minute", "UPTIME_RATE_LIMIT": "1/minute"}]
)
def test_agent_calls_are_limited_per_agent_token(make_agent, anon):
    paris, lyon = make_agent(), make_agent()
    # The per-session budget (1/minute here) is not an agent's.
    assert [paris.post("/claims", json={}).status_code for _ in range(3)] == [200] * 3

    refused = paris.post("/leases", json={"leases": []})
    assert_error(refused, 429, "RATE_LIMIT_EXCEEDED")
    assert int(refused.headers["Retry-After"]) > 0
    assert lyon.post("/claims", json={}).status_code == 200  # a budget of its own
    # Made-up tokens are counted per address (UPTIME_RATE_LIMIT), so each
    # buys no fresh budget.
    fakes = [
        anon.post("/api/v1/agent/claims", json={}, headers={"Authorization": f"Bearer upa_x{i}"})
        for i in range(3)
    ]
    assert [r.status_code for r in fakes] == [401, 429, 429]


@pytest.mark.parametrize("extra_env", [{"UPTIME_AGENT_RATE_LIMIT": "off"}])
def test_the_agent_rate_limit_can_be_turned_off(agent):
    assert all(agent.post("/claims", json={}).status_code == 200 for _ in range(30))


def _due(claim: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(claim["due"])
