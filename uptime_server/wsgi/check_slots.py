"""How many "test now" runs this process serves at once, in total and per user.

A test run holds its waitress thread until the check ends (up to
``UPTIME_TEST_RUN_TIMEOUT``). Without a cap, a few slow targets would hold
every thread and /healthz, /metrics and the rest of the API would queue
behind them. The threads belong to this process, so the count is kept in
memory: a conditional update in the database would count the wrong thing.
A run over either cap is refused at once with 429 ``RATE_LIMIT_EXCEEDED``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from uptime_server.errors import ApiError

# Seconds a refused caller is asked to wait: most test runs end within that,
# and none holds its slot past UPTIME_TEST_RUN_TIMEOUT.
RETRY_AFTER = 5


class RunSlots:
    """At most *total* holders at once, and at most *per_user* per user."""

    def __init__(self, total: int, per_user: int) -> None:
        self.total = total
        self.per_user = per_user
        self._held: Counter[Hashable] = Counter()
        self._lock = threading.Lock()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._held.total()

    def try_acquire(self, user: Hashable) -> str | None:
        """Take a slot for *user*; on refusal, say which cap is full."""
        with self._lock:
            if self._held[user] >= self.per_user:
                return f"you already have {self.per_user} test runs under way"
            if self._held.total() >= self.total:
                return f"{self.total} test runs are already under way on this server"
            self._held[user] += 1
            return None

    def release(self, user: Hashable) -> None:
        with self._lock:
            self._held[user] -= 1
            if self._held[user] <= 0:
                del self._held[user]

    @contextmanager
    def hold(self, user: Hashable) -> Iterator[None]:
        """A slot for the block, or 429 RATE_LIMIT_EXCEEDED with Retry-After."""
        refused = self.try_acquire(user)
        if refused is not None:
            raise ApiError(
                "RATE_LIMIT_EXCEEDED",
                f"Too many test runs at once: {refused}; retry in a few seconds",
                headers={"Retry-After": str(RETRY_AFTER)},
            )
        try:
            yield
        finally:
            self.release(user)
