"""Uptime figures kept between requests until the monitor's roll-ups or its window move.

``figures.uptime_by_monitor`` sums a few dozen roll-up rows per monitor and
window: for a list page of 100 that is most of the request. Yet a figure
changes only when the window slides (every five minutes: its edges are
multiples of five minutes, ``figures.window``) or when the monitor's roll-ups
are written, and every roll-up write moves ``monitors.rollup_version`` in its
own transaction (``rollups.add_runs``, migration 0014).

So a figure is kept under (monitor, window name) with the version and window
edges it was computed for, and served again while the caller's row shows the
same version and ``now`` gives the same edges. The caller reads the monitor
row (its version) *before* asking: the roll-ups read on a miss are then at
least that new, and a figure is never kept under a version newer than what
it saw. Keys hold no user: a monitor id names one monitor for good (ids are
never reused), and callers only ask for monitors the user may see.

One cache per bound database (tests bind a new one each time). At most
``MAX_ENTRIES`` figures; past that the older half goes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from datetime import datetime

import peewee

from uptime_server import db as dbmod
from uptime_server.stats.figures import PERIODS, UPTIME_WINDOWS, uptime_by_monitor, window

MAX_ENTRIES = 50_000  # a few MB: three windows of 16,000 monitors

# (monitor id, window name) -> (rollup_version, window start, window end, uptime %)
Entry = tuple[int, int, int, float | None]


class UptimeCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: dict[tuple[int, str], Entry] = {}
        self._db: peewee.Database | None = None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def uptime(
        self,
        versions: Mapping[int, int],
        now: datetime,
        windows: Iterable[str] = UPTIME_WINDOWS,
    ) -> dict[int, dict[str, float | None]]:
        """``uptime_by_monitor`` of the monitors in *versions* (id -> its row's
        ``rollup_version``, read before this call)."""
        names = list(windows)
        edges = {name: _edges(name, now) for name in names}
        entries = self._entries_of(dbmod.database.obj)
        out: dict[int, dict[str, float | None]] = {}
        stale: list[int] = []
        for monitor_id, version in versions.items():
            got: dict[str, float | None] = {}
            for name in names:
                entry = entries.get((monitor_id, name))
                if entry is None or entry[:3] != (version, *edges[name]):
                    stale.append(monitor_id)
                    break
                got[name] = entry[3]
            else:
                out[monitor_id] = got
        self.hits += len(out)
        self.misses += len(stale)
        if stale:
            fresh = uptime_by_monitor(stale, now, windows=names)
            with self._lock:
                if len(entries) + len(stale) * len(names) > self.max_entries:
                    for key in list(entries)[: len(entries) // 2 + len(stale) * len(names)]:
                        entries.pop(key, None)
                for monitor_id in stale:
                    version = versions[monitor_id]
                    for name in names:
                        value = fresh[monitor_id][name]
                        entries[(monitor_id, name)] = (version, *edges[name], value)
                    out[monitor_id] = fresh[monitor_id]
        return {monitor_id: out[monitor_id] for monitor_id in versions}

    def _entries_of(self, db: peewee.Database) -> dict[tuple[int, str], Entry]:
        if db is not self._db:
            with self._lock:
                if db is not self._db:
                    self._entries = {}
                    self._db = db
        return self._entries


def _edges(name: str, now: datetime) -> tuple[int, int]:
    w = window(PERIODS[name], now)
    return w.start, w.end


cache = UptimeCache()
