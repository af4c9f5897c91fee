"""The overdue verdict holds only for the state it was drawn from."""

from __future__ import annotations

from typing import Any

from tests.heartbeats.conftest import make_heartbeat, ping_path, shown
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.engine.dispatcher import Dispatcher
from uptime_server.engine.recorder import Recorder
from uptime_server.heartbeats.verdict import heartbeat_verdict
from uptime_server.models import CheckRun, MonitorLocation


def _verdict(claim: Any, now: Any) -> CheckOutcome:
    assert claim.spec is not None
    result = heartbeat_verdict(claim.spec)
    assert result.next_due is not None
    return CheckOutcome.from_run(
        result,
        monitor_id=claim.monitor_id,
        monitor_created_at=claim.monitor_created_at,
        location=claim.location,
        checked_at=now,
        next_check_at=result.next_due(now),
        lease_owner=claim.lease_owner,
    )


def ping_during_verdict(anon: Any, m: dict[str, Any], suffix: str, clock: Any, settings: Any):
    """Claim the overdue monitor, ping it (*suffix*), then record the verdict drawn at the claim."""
    clock.advance(minutes=71)
    [claim] = Dispatcher(settings).claim(clock.now())
    assert anon.get(ping_path(m, suffix)).status_code == 200  # lands while the verdict is in flight
    [done] = Recorder(settings).record([_verdict(claim, clock.now())], now=clock.now())
    return done


def test_a_ping_between_claim_and_verdict_wins(
    alice: Any, anon: Any, clock: Any, settings: Any
) -> None:
    m = make_heartbeat(alice)
    assert ping_during_verdict(anon, m, "", clock, settings).skipped == "stale"
    monitor = shown(alice, m["id"])
    assert (monitor["status"], monitor["next_deadline"]) == ("online", "2026-11-22T14:21:00Z")
    slot = MonitorLocation.get(MonitorLocation.monitor == m["id"])
    assert slot.lease_owner is None  # given back, the ping's deadline kept
    assert CheckRun.select().count() == 1


def test_a_log_ping_does_not_make_the_verdict_stale(
    alice: Any, anon: Any, clock: Any, settings: Any
) -> None:
    m = make_heartbeat(alice)
    assert ping_during_verdict(anon, m, "log", clock, settings).skipped is None
    assert shown(alice, m["id"])["status"] == "offline"
