"""Roll-up cells this process has seen committed: on PostgreSQL, rows that exist.

A monitor checked every minute writes into its five-minute row five times,
its hour row sixty times, its day row 1,440 times. On PostgreSQL
``rollups.add_runs`` first tries to insert every cell of a batch (insert or
ignore), then locks and merges the cells that were there. For a cell the
process itself wrote in a committed transaction, that insert can only be
ignored: ``KnownCells`` remembers those cells, so a batch locks and merges
them without the insert. That is a statement a batch less in a monitor's
steady state, and a third fewer rows rendered and sent.

What it holds: the monitor ids of the newest ``KEEP_BUCKETS`` buckets of each
resolution (older buckets are written rarely: a late result), added only
after the transaction that wrote them committed. Rows are deleted only by
retention (old buckets) and with their monitor; a cell found gone anyway
(``forget``) empties the whole memory, and the batch inserts it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

Key = tuple[int, int, int]  # (monitor_id, resolution, bucket), as rollups.Key
KEEP_BUCKETS = 2  # per resolution: the current one and the one before


class KnownCells:
    """Thread-safe: the recorder runs in several threads of one process."""

    def __init__(self, keep_buckets: int = KEEP_BUCKETS) -> None:
        self._keep = keep_buckets
        self._lock = threading.Lock()
        self._monitors: dict[tuple[int, int], set[int]] = {}  # (resolution, bucket) -> ids

    def among(self, keys: Iterable[Key]) -> set[Key]:
        """The cells of *keys* known to exist."""
        with self._lock:
            cells = self._monitors
            return {key for key in keys if key[0] in cells.get((key[1], key[2]), ())}

    def add(self, keys: Iterable[Key]) -> None:
        """Remember *keys*: call once the transaction that wrote them has committed."""
        with self._lock:
            cells = self._monitors
            for monitor, resolution, bucket in keys:
                ids = cells.get((resolution, bucket))
                if ids is None:
                    ids = cells[(resolution, bucket)] = set()
                    self._drop_old(resolution)
                ids.add(monitor)

    def forget(self) -> None:
        with self._lock:
            self._monitors.clear()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(ids) for ids in self._monitors.values())

    def _drop_old(self, resolution: int) -> None:
        buckets = sorted(b for r, b in self._monitors if r == resolution)
        for bucket in buckets[: -self._keep]:
            del self._monitors[(resolution, bucket)]
