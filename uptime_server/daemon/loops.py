"""Runs daemon components: each a ``loop(now)`` iteration, in its own thread.

A component does one iteration per ``loop(now)`` call and returns how many
seconds it would like to sleep before the next (its work decides: the next
due check, the next outbox retry). The runner sleeps on a stop event, so
SIGTERM wakes it at once; sleeps are measured on the monotonic clock, and an
exception in one iteration is logged and the loop goes on after a pause.
An iteration that failed because the database is unavailable (a restart, a
failover, a lock held too long) is not logged with a traceback: the process
logs one line per outage (``db.outages.OUTAGES``), and the loop tries again
after a backoff of at most a few seconds. Tests call ``loop(now)`` directly
and need neither threads nor sleeps.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from uptime_server.clock import Clock
from uptime_server.db.outages import OUTAGES, backoff, unavailable

log = logging.getLogger(__name__)

ERROR_PAUSE = 5.0
MAX_SLEEP = 5.0


class LoopComponent(Protocol):
    name: str

    def loop(self, now: object) -> float:
        """Do one iteration; return seconds until the next is wanted."""
        ...

    def shutdown(self, grace: float) -> None:
        """Stop taking new work; finish in-flight work within *grace* seconds."""
        ...


class LoopRunner:
    """Drives one LoopComponent in a thread until stopped."""

    def __init__(self, component: LoopComponent, clock: Clock | None = None) -> None:
        self.component = component
        self.name = component.name
        self.clock = clock or Clock()
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.services = getattr(component, "services", {})

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        outage = 0  # iterations in a row that found the database unavailable
        while not self.stop_event.is_set():
            try:
                delay = self.component.loop(self.clock.now())
            except Exception as exc:  # a component never kills its thread
                if unavailable(exc):
                    OUTAGES.failed(exc, self.name)
                    delay = backoff(outage)
                    outage += 1
                else:
                    log.exception("%s: iteration failed", self.name)
                    delay = ERROR_PAUSE
            else:
                if outage:  # this iteration got through to the database
                    OUTAGES.recovered()
                    outage = 0
            self.stop_event.wait(max(0.0, min(delay, MAX_SLEEP)))

    def stop(self, grace: float) -> None:
        """Stop the loop and shut the component down, all within *grace* seconds.

        The iteration under way ends first (an iteration is short, unless it
        waits on a database that does not answer); the component's shutdown
        has what is left of the grace.
        """
        start = time.monotonic()
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout=grace)
            if self.thread.is_alive():
                log.warning("%s: the iteration under way did not end in time", self.name)
        self.component.shutdown(max(0.0, grace - (time.monotonic() - start)))
