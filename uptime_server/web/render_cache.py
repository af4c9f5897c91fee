"""A short-lived in-process cache of rendered public responses, one render per burst.

Entries live ``ttl`` seconds on the injected clock's monotonic counter.
Concurrent misses of one key wait for the first one's render instead of
rendering too (a lock per key), so a burst of visitors costs one render.
``forget`` drops a key at once (a page edited or deleted in this process);
other processes serving the same database see the change within ``ttl``. A
render that was under way when ``forget`` ran is answered but not kept: it
may have read the rows before the change (a badge token read just before
its rotation must not be served for another ``ttl``).

``peek`` reads a fresh entry without rendering: the WSGI fast path in front
of Flask (``fast_paths/public_pages``) answers hits with it and hands misses to Flask.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from uptime_server.clock import Clock

# Bodies above this are also kept gzipped: a status page's day cells repeat,
# so it compresses many times over (bench/README.md#figures-moved-from-the-code-issue-30).
GZIP_ABOVE = 2048


@dataclass(frozen=True)
class Rendered:
    body: bytes
    etag: str
    mimetype: str
    gzipped: bytes | None = None


def rendered(body: bytes, mimetype: str) -> Rendered:
    packed = gzip.compress(body, compresslevel=5, mtime=0) if len(body) > GZIP_ABOVE else None
    return Rendered(body, hashlib.blake2b(body, digest_size=12).hexdigest(), mimetype, packed)


class RenderCache:
    def __init__(self, clock: Clock, ttl: float, max_entries: int = 10_000) -> None:
        self.clock, self.ttl, self.max_entries = clock, ttl, max_entries
        self._entries: dict[Hashable, tuple[float, Rendered]] = {}
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()
        self._generation = 0  # forget() calls so far: a render spanning one is not kept

    def get(self, key: Hashable, render: Callable[[], Rendered | None]) -> Rendered | None:
        """The fresh entry of *key*, or *render*'s result (None: nothing to cache)."""
        hit = self._fresh(key)
        if hit is not None:
            return hit
        with self._guard:
            if len(self._locks) >= self.max_entries:
                self._locks.clear()  # at worst a key renders twice once
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            hit = self._fresh(key)
            if hit is not None:
                return hit
            generation = self._generation
            value = render()
            if value is not None:
                with self._guard:
                    if generation != self._generation:
                        return value  # something was forgotten meanwhile: maybe this
                    if len(self._entries) >= self.max_entries:
                        self._entries.clear()
                    self._entries[key] = (self.clock.monotonic() + self.ttl, value)
            return value

    def count(self) -> int:
        """Entries kept (fresh or not yet dropped); not ``__len__``, so an empty cache is
        not falsy."""
        return len(self._entries)

    def peek(self, key: Hashable) -> Rendered | None:
        """The fresh entry of *key*, or None (nothing is rendered)."""
        return self._fresh(key)

    def forget(self, match: Callable[[Hashable], bool]) -> None:
        with self._guard:
            self._generation += 1
            for key in [k for k in self._entries if match(k)]:
                del self._entries[key]

    def _fresh(self, key: Hashable) -> Rendered | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] <= self.clock.monotonic():
            return None
        return entry[1]
