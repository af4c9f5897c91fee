"""The API's one time format (``clock.isoformat``): UTC, to the second, with a Z."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from uptime_server.clock import isoformat


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2026, 11, 24, 19, 52, 3, 999_999, tzinfo=UTC), "2026-11-24T19:52:03Z"),
        (datetime(2026, 11, 24, 19, 52, 3), "2026-11-24T19:52:03Z"),  # naive is UTC
        (
            datetime(2026, 11, 24, 21, 52, 3, 5, tzinfo=timezone(timedelta(hours=2))),
            "2026-11-24T19:52:03Z",
        ),
        (datetime(2026, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))), "2025-12-31T23:30:00Z"),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00Z"),
        (datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC), "9999-12-31T23:59:59Z"),
        (None, None),
    ],
)
def test_a_time_is_written_in_utc_to_the_second_with_a_z(value, expected):
    assert isoformat(value) == expected
