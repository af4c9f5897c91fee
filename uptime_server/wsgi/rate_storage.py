"""The rate limiter's in-memory storage, without a sweep of every key each 10 ms.

``limits``' ``MemoryStorage`` expires counters from a timer thread that it
starts again 10 ms after the last one ended, as long as counting goes on,
and each run walks every key. Heartbeat pings are counted per token, so a
daemon with 10,000 heartbeats holds 20,000 keys (the ping limit and the
session-wide one), and under a steady stream of pings that walk took a
visible share of the answering process's CPU
(bench/README.md#what-the-ping-rate-work-bought-issue-13).

``LazyMemoryStorage`` is the same storage (counts, windows and answers are
``MemoryStorage``'s own: an expired counter is dropped when it is next read)
that walks the keys to free memory at most once per ``SWEEP_SECONDS``, in
the thread that counts, and starts no timer. ``UPTIME_RATELIMIT_STORAGE_URL``
``memory://`` (the default) selects it.
"""

from __future__ import annotations

import threading
import time

from limits.storage import MemoryStorage

SCHEME = "uptime-memory"
SWEEP_SECONDS = 1.0


class LazyMemoryStorage(MemoryStorage):
    STORAGE_SCHEME = [SCHEME]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: str):
        self._next_sweep = time.monotonic() + SWEEP_SECONDS
        self._sweeping = threading.Lock()
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    def _MemoryStorage__schedule_expiry(self) -> None:  # noqa: N802 (the base's private hook)
        now = time.monotonic()
        if now < self._next_sweep or not self._sweeping.acquire(blocking=False):
            return
        try:
            self._next_sweep = now + SWEEP_SECONDS
            self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
        finally:
            self._sweeping.release()


def storage_uri(configured: str) -> str:
    """The limiter's storage URI for *configured*: ``memory://`` is the lazy one."""
    return f"{SCHEME}://" if configured == "memory://" else configured
