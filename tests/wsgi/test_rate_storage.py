"""The limiter's lazy in-memory storage: MemoryStorage's counts, no sweep timer per count."""

from __future__ import annotations

import time
from typing import Any

from limits import parse
from limits.strategies import FixedWindowRateLimiter

from uptime_server.wsgi.context import app_state
from uptime_server.wsgi.rate_storage import LazyMemoryStorage, storage_uri


def test_it_counts_as_the_memory_storage_does() -> None:
    storage = LazyMemoryStorage()
    limiter = FixedWindowRateLimiter(storage)
    limit = parse("3/minute")
    assert [limiter.hit(limit, "ping:a") for _ in range(4)] == [True, True, True, False]
    assert limiter.hit(limit, "ping:b")  # another key, its own budget
    assert limiter.get_window_stats(limit, "ping:a").remaining == 0


def test_counting_starts_no_timer_and_sweeps_expired_keys_at_most_once_a_second() -> None:
    storage = LazyMemoryStorage()
    storage.timer.join()  # the base's one timer from __init__
    for i in range(50):
        storage.incr(f"k{i}", 60)
    assert not storage.timer.is_alive()
    # k0's window is over: a sweep drops it, but none is due yet.
    storage.expirations["k0"] = time.time() - 1
    storage.incr("k1", 60)
    assert "k0" in storage.storage
    storage._next_sweep = 0.0  # the sweep is due
    storage.incr("k1", 60)
    assert "k0" not in storage.storage and "k0" not in storage.expirations
    assert storage.get("k1") == 3
    assert storage._next_sweep > time.monotonic()


def test_an_expired_counter_reads_as_zero_before_any_sweep() -> None:
    storage = LazyMemoryStorage()
    storage.incr("k", 60)
    storage.expirations["k"] = time.time() - 1
    assert storage.get("k") == 0
    assert storage.incr("k", 60) == 1


def test_the_app_limits_with_it_by_default_and_keeps_other_urls(app: Any) -> None:
    assert isinstance(app_state(app).limiter.limiter.storage, LazyMemoryStorage)
    assert storage_uri("redis://127.0.0.1:6379") == "redis://127.0.0.1:6379"
