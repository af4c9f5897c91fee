"""What crosses the recorder process's pipe: outcomes as tuples, the same outcomes out."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime

from uptime_server.engine.outcomes import CheckOutcome, PingFacts
from uptime_server.engine.recorder_process import pack, unpack

AT = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


def test_outcomes_cross_the_pipe_unchanged() -> None:
    outcomes = [
        CheckOutcome(
            monitor_id=7,
            monitor_created_at=AT,
            location="local",
            checked_at=AT,
            passed=False,
            response_time=1200,
            status_code=None,
            error="exit code 3: disk full",
            next_check_at=AT,
            ping=PingFacts(kind="exit", exit_code=3, message="disk full", source_ip="::1"),
        ),
        CheckOutcome(
            monitor_id=8,
            monitor_created_at=AT,
            location="eu",
            checked_at=AT,
            passed=True,
            response_time=35,
            status_code=200,
            error=None,
            attempts=2,
            retried=True,
            cert_expires_at=AT,
            cert_serial="0a",
            lease_owner="engine-1",
            expect_version=4,
        ),
    ]
    packed = pack(outcomes)
    assert all(type(row) is tuple for row in packed)
    assert unpack(pickle.loads(pickle.dumps(packed))) == outcomes
