"""The daemon's shutdown fits in UPTIME_SHUTDOWN_GRACE, whatever its parts do (in process)."""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.api.shapes import sqlite_only
from uptime_server.daemon.process import Daemon, DaemonOptions
from uptime_server.engine.worker import DatabaseWorker


class Stuck:
    """A component whose stop does not return: say, waiting on a database that is gone."""

    name = "stuck"

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.release = threading.Event()

    def start(self) -> None:
        pass

    def stop(self, grace: float) -> None:
        self.asked.append(grace)
        self.release.wait(60)


class Quick:
    name = "quick"

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def start(self) -> None:
        pass

    def stop(self, grace: float) -> None:
        self.stopped.set()


@sqlite_only
def test_shutdown_ends_within_the_grace_and_kills_a_database_worker_still_running(
    settings: Any, db: Any
) -> None:
    daemon = Daemon(settings.with_overrides(shutdown_grace=1), DaemonOptions(api=False))
    stuck, quick = Stuck(), Quick()
    daemon.components.extend([quick, stuck])
    child = DatabaseWorker(settings)
    child.start()  # as if its parent had never got to close it
    try:
        started = time.monotonic()
        daemon._shutdown()
        took = time.monotonic() - started
        assert took < 2.5, f"shutdown took {took:.1f}s with a grace of 1 s"
        assert stuck.asked and stuck.asked[0] <= 1  # every part is given what is left
        assert quick.stopped.is_set()  # stopped beside the stuck one, not after it
        assert not child._process.is_alive()  # it would hold up the interpreter's exit
    finally:
        stuck.release.set()
        child.close(1)
