"""The pure certificate-expiry rules (checks/cert_alerts.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from uptime_server.checks.cert_alerts import (
    SeenCert,
    alert_key,
    crossed_threshold,
    days_left,
    decide,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
DEFAULT = [14, 7, 3, 1]


@pytest.mark.parametrize(
    ("left", "expected"),
    [
        (20 * DAY, 20),
        (14 * DAY, 14),
        (13 * DAY + timedelta(seconds=1), 14),  # rounded up
        (6 * DAY + timedelta(hours=2), 7),
        (timedelta(seconds=1), 1),
        (timedelta(0), 0),
        (-3 * DAY, 0),  # expired
    ],
)
def test_days_left_rounds_up(left: timedelta, expected: int) -> None:
    assert days_left(NOW + left, NOW) == expected


@pytest.mark.parametrize(
    ("left", "alerted", "expected"),
    [
        (15, None, None),  # nothing crossed yet
        (14, None, 14),
        (14, 14, None),  # already alerted
        (9, 14, None),
        (7, 14, 7),
        (2, None, 3),  # several crossed at once: the smallest
        (2, 7, 3),
        (0, 3, 1),  # expired: the last threshold
        (0, 1, None),
    ],
)
def test_the_smallest_threshold_crossed_and_not_yet_alerted(
    left: int, alerted: int | None, expected: int | None
) -> None:
    assert crossed_threshold(DEFAULT, left, alerted) == expected


def test_no_thresholds_never_alert() -> None:
    assert crossed_threshold([], 0, None) is None


def test_the_order_of_the_thresholds_does_not_matter() -> None:
    assert crossed_threshold([1, 3, 14, 7], 5, None) == crossed_threshold(DEFAULT, 5, None) == 7


CERT = SeenCert("0A1B", NOW + 10 * DAY)


def test_the_same_certificate_keeps_what_was_alerted() -> None:
    first = decide(None, None, CERT, DEFAULT, NOW)
    assert (first.alert_days, first.alerted_days, first.days_left, first.renewed) == (
        14,
        14,
        10,
        False,
    )
    again = decide(CERT, first.alerted_days, CERT, DEFAULT, NOW + DAY)
    assert (again.alert_days, again.alerted_days, again.renewed) == (None, 14, False)
    week = decide(CERT, again.alerted_days, CERT, DEFAULT, NOW + 3 * DAY)
    assert (week.alert_days, week.alerted_days) == (7, 7)


@pytest.mark.parametrize(
    "renewed",
    [SeenCert("0A1C", CERT.not_after), SeenCert(CERT.serial, CERT.not_after + 90 * DAY)],
    ids=["new serial", "new not-after"],
)
def test_a_renewed_certificate_starts_again(renewed: SeenCert) -> None:
    decision = decide(CERT, 1, renewed, DEFAULT, NOW)
    assert decision.renewed
    expected = 14 if renewed.not_after == CERT.not_after else None
    assert decision.alert_days == expected and decision.alerted_days == expected


def test_a_row_from_before_serials_is_no_renewal() -> None:
    decision = decide(SeenCert(None, CERT.not_after), None, CERT, DEFAULT, NOW)
    assert (decision.renewed, decision.alert_days) == (False, 14)


def test_the_key_names_monitor_certificate_and_threshold() -> None:
    keys = {
        alert_key(1, CERT, 7),
        alert_key(2, CERT, 7),
        alert_key(1, CERT, 3),
        alert_key(1, SeenCert("0A1C", CERT.not_after), 7),
        alert_key(1, SeenCert(CERT.serial, CERT.not_after + DAY), 7),
    }
    assert len(keys) == 5 and alert_key(1, CERT, 7) == alert_key(1, CERT, 7)
