"""gc_policy.apply sets the collector's thresholds and freezes start-up's objects.

Run in a child interpreter: a freeze is for the life of the process, and the
test worker's own collector must stay as Python sets it.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROGRAM = """
import gc, json, sys
from uptime_server import gc_policy
threshold = json.loads(sys.argv[1])
gc_policy.apply(tuple(threshold) if threshold else None)
print(json.dumps([gc.get_threshold(), gc.get_freeze_count()]))
"""


def _apply(threshold: list[int] | None) -> tuple[list[int], int]:
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(threshold)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    thresholds, frozen = json.loads(out)
    return thresholds, frozen


def test_it_sets_the_thresholds_and_freezes_what_exists() -> None:
    thresholds, frozen = _apply([10_000, 10, 10])
    assert thresholds == [10_000, 10, 10]
    assert frozen > 1000  # the modules imported so far


def test_python_s_own_thresholds_are_left_alone() -> None:
    thresholds, frozen = _apply(None)
    assert thresholds == [700, 10, 10]
    assert frozen == 0
