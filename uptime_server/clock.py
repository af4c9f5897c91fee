"""Injected time: every component asks a clock, never the system directly."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta


class Clock:
    """Wall-clock UTC time and a monotonic counter for measuring sleeps."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock(Clock):
    """A clock that moves only when told to: tests and benchmarks."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 1000.0
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def monotonic(self) -> float:
        with self._lock:
            return self._mono

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        delta = timedelta(seconds=seconds, **kwargs)
        with self._lock:
            self._now += delta
            self._mono += delta.total_seconds()
            return self._now

    def set(self, when: datetime) -> None:
        with self._lock:
            self._mono += (when - self._now).total_seconds()
            self._now = when


def utc(dt: datetime | None) -> datetime | None:
    """Normalise to an aware UTC datetime (naive values are taken as UTC)."""
    if dt is None:
        return None
    if dt.tzinfo is UTC:  # most times: stored times are read as aware UTC
        return dt
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def isoformat(dt: datetime | None) -> str | None:
    """ISO 8601 UTC with a Z suffix, to the second: the API's one time format."""
    if dt is None:
        return None
    if dt.tzinfo is not UTC:
        dt = utc(dt)
    # "YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00", a four-digit year always: a list
    # page writes one per monitor, and cutting it is half the cost of
    # replacing the microseconds and then the offset (keyword arguments are
    # the slow part).
    return dt.isoformat()[:19] + "Z"
