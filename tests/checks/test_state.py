"""The pure status transitions (docs/api.md#statuses, #notification-life-cycle)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from uptime_server.checks.quorum import quorum_status
from uptime_server.checks.state import MonitorState, RunFacts, run_status, transition

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def fresh(**kw) -> MonitorState:
    return MonitorState(**kw)


@pytest.mark.parametrize(
    ("facts", "degraded", "expected"),
    [
        (RunFacts(passed=True, response_time=100), None, "online"),
        (RunFacts(passed=False), None, "offline"),
        (RunFacts(passed=True, retried=True), None, "warning"),
        (RunFacts(passed=True, response_time=501), 500, "warning"),
        (RunFacts(passed=True, response_time=500), 500, "online"),
        (
            RunFacts(passed=True, is_https=True, cert_expires_at=NOW + timedelta(days=10)),
            None,
            "warning",
        ),
        (
            RunFacts(passed=True, is_https=True, cert_expires_at=NOW + timedelta(days=15)),
            None,
            "online",
        ),
        (RunFacts(passed=False, retried=True), None, "offline"),
    ],
)
def test_it_rates_a_run(facts, degraded, expected):
    assert run_status(facts, degraded_ms=degraded, now=NOW) == expected


def test_it_combines_locations():
    # Two locations: the default quorum (a majority) is both.
    assert quorum_status([], 2) == "pending"
    assert quorum_status(["offline", "offline"], 2) == "offline"
    assert quorum_status(["online", "online"], 2) == "online"
    assert quorum_status(["online", "offline"], 2) == "warning"
    assert quorum_status(["online", "warning"], 2) == "warning"


def test_it_opens_an_incident_at_the_threshold():
    s, active = fresh(), False
    opened = []
    for _ in range(4):
        tr = transition(
            s,
            location="local",
            status="offline",
            locations=["local"],
            has_active_incident=active,
            alert_threshold=3,
        )
        opened.append(tr.open_incident)
        s = fresh(status=tr.status, consecutive_failures=tr.state.consecutive_failures)
        active = active or tr.open_incident
    assert opened == [False, False, True, False]
    assert s.consecutive_failures == 4


def test_it_resolves_on_the_first_pass_and_resets_failures():
    s = fresh(status="offline", consecutive_failures=5)
    tr = transition(
        s,
        location="local",
        status="warning",
        locations=["local"],
        has_active_incident=True,
        alert_threshold=1,
    )
    assert tr.resolve_incident and tr.status == "warning" and tr.state.consecutive_failures == 0


def test_it_stays_quiet_while_suppressed_until_recovery():
    s = fresh(status="offline", consecutive_failures=2, alerts_suppressed=True)
    tr = transition(s, location="local", status="offline", locations=["local"], alert_threshold=1)
    assert not tr.open_incident and tr.state.alerts_suppressed
    tr = transition(s, location="local", status="online", locations=["local"], alert_threshold=1)
    assert not tr.resolve_incident and not tr.state.alerts_suppressed


def test_a_partial_outage_is_a_warning_not_an_incident():
    # us has reported in the open round: eu's run closes it.
    s = fresh(status="online", round_locations=("us",))
    tr = transition(
        s,
        location="eu",
        status="offline",
        locations=["eu", "us"],
        location_statuses={"eu": "online", "us": "online"},
        alert_threshold=1,
    )
    assert tr.round_closed and tr.status == "warning" and not tr.open_incident
    s2 = fresh(status="warning", round_locations=("eu",))
    tr2 = transition(
        s2,
        location="us",
        status="offline",
        locations=["eu", "us"],
        location_statuses=tr.location_statuses,
        alert_threshold=1,
    )
    assert tr2.status == "offline" and tr2.open_incident


def test_it_ignores_locations_no_longer_configured():
    s = fresh()
    tr = transition(
        s,
        location="local",
        status="online",
        locations=["local"],
        location_statuses={"gone": "offline"},
        alert_threshold=1,
    )
    assert tr.status == "online" and "gone" not in tr.location_statuses
