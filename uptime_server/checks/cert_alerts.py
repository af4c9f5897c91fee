"""Certificate-expiry alerts: which threshold a check run crosses (pure).

A monitor's alert settings hold ``cert_expiry_days``, thresholds in days
(default 14, 7, 3, 1). The monitor row remembers the certificate last seen
(``cert_serial`` and ``cert_expires_at``) and the smallest threshold already
alerted for it (``cert_alerted_days``). The recorder asks ``decide`` on every
run that saw a certificate, inside the transaction that writes the run, with
the monitor's row locked; whatever it decides is written in that transaction.

Days left. The time to the certificate's not-after, rounded *up* to whole
days: 6 days 2 hours left is 7 days, and crosses the 7-day threshold
(days left <= threshold) exactly when the time left is at most 7 days. An
expired certificate has 0 days left and crosses every threshold. The alert
is named by the threshold ("expires in 7 days").

Several thresholds at once. A run that crosses several thresholds not yet
alerted (the first check finds 2 days left of [14, 7, 3, 1]) sends ONE alert,
for the smallest of them (3), never a burst of stale ones: each alert says the
same thing with a smaller number, and only the newest is worth reading.

Renewal. A certificate with another serial or another not-after is a new one:
its thresholds start again (nothing alerted), and the recorder resolves the
alert still active for the old one. Certificates that take turns (servers
behind one name) would look renewed on every switch; ``alert_key`` is unique
per certificate and threshold, so switching back alerts nothing again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

DAY_SECONDS = 86400


@dataclass(frozen=True)
class SeenCert:
    """A certificate as the monitor row or a check run names it."""

    serial: str | None
    not_after: datetime


@dataclass(frozen=True)
class CertDecision:
    """What one run means for the monitor's certificate alerts.

    ``alert_days``: the threshold to alert now (None: nothing to send);
    ``alerted_days``: what the monitor row keeps afterwards; ``renewed``: the
    run saw another certificate than the one the row remembers.
    """

    days_left: int
    alerted_days: int | None
    alert_days: int | None = None
    renewed: bool = False


def days_left(not_after: datetime, now: datetime) -> int:
    """Whole days until *not_after*, rounded up; 0 once it has passed."""
    seconds = (not_after - now).total_seconds()
    return max(0, math.ceil(seconds / DAY_SECONDS))


def crossed_threshold(thresholds: list[int], left: int, alerted: int | None) -> int | None:
    """The smallest threshold crossed with *left* days left and not yet alerted, or None.

    Crossed: ``left <= threshold``. Already alerted: any threshold at or above
    *alerted* (the smallest one alerted for this certificate so far).
    """
    crossed = [t for t in thresholds if left <= t and (alerted is None or t < alerted)]
    return min(crossed) if crossed else None


def same_cert(known: SeenCert | None, seen: SeenCert) -> bool:
    """Is *seen* the certificate the monitor row remembers?

    A row written before serials were stored (``serial`` None) names no
    certificate yet: nothing was alerted for it, so the run's is taken as new
    without counting as a renewal.
    """
    return known is not None and known.serial == seen.serial and known.not_after == seen.not_after


def decide(
    known: SeenCert | None,
    alerted: int | None,
    seen: SeenCert,
    thresholds: list[int],
    now: datetime,
) -> CertDecision:
    """The alert (if any) a run that saw *seen* at *now* sends, and the state it leaves."""
    renewed = known is not None and known.serial is not None and not same_cert(known, seen)
    if not same_cert(known, seen):
        alerted = None
    left = days_left(seen.not_after, now)
    alert = crossed_threshold(thresholds, left, alerted)
    return CertDecision(
        days_left=left,
        alerted_days=alert if alert is not None else alerted,
        alert_days=alert,
        renewed=renewed,
    )


def alert_key(monitor_id: int, seen: SeenCert, threshold: int) -> str:
    """The unique key of one certificate's one threshold alert (notifications.cert_alert_key)."""
    return f"{monitor_id}:{seen.serial}:{seen.not_after.isoformat()}:{threshold}"
