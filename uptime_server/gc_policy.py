"""How often the long-running processes collect cyclic garbage (``UPTIME_GC_THRESHOLD``).

Python runs its cycle collector once the tracked objects allocated minus
those freed pass 700 (generation 0), and walks older generations every tenth
time. A check's asyncio and aiohttp objects (futures, transports,
protocols, tracebacks) hold each other in cycles, so the engine allocates
tracked objects quickly, and at the default threshold the collector took a
large share of each engine process's CPU in ``make bench-scale``; with
generation 0 at 10,000 (and the older generations following it) it takes a
fraction of that, and a check costs less CPU
(bench/README.md#the-cycle-collector-in-the-engine-uptime_gc_threshold). The
price is memory: up to 10,000 more garbage objects between collections.

``apply`` also freezes what start-up made (modules, the app, settings):
``gc.freeze`` moves it out of every later walk of the oldest generation.
Called by the daemon once its parts are running, by the database worker
and by the probe agent; ``python`` as the setting keeps the interpreter's
own thresholds (and freezes nothing).
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger(__name__)

Threshold = tuple[int, int, int]


def apply(threshold: Threshold | None) -> None:
    """Freeze what exists now and set *threshold* (None: leave Python's own)."""
    if threshold is None:
        return
    gc.freeze()
    gc.set_threshold(*threshold)
    log.info(
        "cycle collector: thresholds %s, %d start-up objects frozen",
        ",".join(map(str, threshold)),
        gc.get_freeze_count(),
    )
