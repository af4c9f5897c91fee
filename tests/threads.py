"""Running test code in threads that start together, for races against the database."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_at_once(*calls: Callable[[], object], timeout: float = 60.0) -> None:
    """Run each call in its own thread, all released at once; fail if any raised."""
    start = threading.Barrier(len(calls))
    errors: list[BaseException] = []

    def run(call: Callable[[], object]) -> None:
        try:
            start.wait()
            call()
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert errors == []
    assert not any(t.is_alive() for t in threads), "a thread did not finish in time"
