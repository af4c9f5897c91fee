from __future__ import annotations

import pytest

from uptime_server.notify.transports import backoff_delay

DAY = 86400


def middle() -> float:
    return 0.5  # the jitter factor is exactly 1.0


def test_it_doubles_from_30_seconds():
    delays = [backoff_delay(attempt, rng=middle) for attempt in range(1, 8)]
    assert delays == [30, 60, 120, 240, 480, 960, 1920]


def test_it_is_capped_at_24_hours():
    assert backoff_delay(12, rng=middle) == 61440
    assert backoff_delay(13, rng=middle) == DAY
    assert backoff_delay(1000, rng=middle) == DAY
    assert backoff_delay(10**9, rng=lambda: 0.999999) == DAY  # no overflow, never above cap


def test_jitter_is_plus_or_minus_20_percent():
    assert backoff_delay(1, rng=lambda: 0.0) == pytest.approx(24)
    assert backoff_delay(1, rng=lambda: 0.999999) == pytest.approx(36, abs=1e-3)
    assert backoff_delay(13, rng=lambda: 0.0) == pytest.approx(0.8 * DAY)


def test_default_rng_stays_in_bounds():
    for attempt in range(1, 20):
        nominal = min(DAY, 30 * 2 ** (attempt - 1))
        assert 0.8 * nominal <= backoff_delay(attempt) <= min(DAY, 1.2 * nominal)


def test_custom_base_and_cap():
    assert backoff_delay(3, base=1, cap=3, rng=middle) == 3
    assert backoff_delay(2, base=1, cap=3, rng=middle) == 2


@pytest.mark.parametrize("attempt", [0, -1])
def test_attempts_are_one_based(attempt):
    with pytest.raises(ValueError):
        backoff_delay(attempt)
