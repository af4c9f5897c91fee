"""Runs daemon components: each a ``loop(now)`` iteration, in its own thread.

A component does one iteration per ``loop(now)`` call and returns how many
seconds it would like to sleep before the next (its work decides: the next
due check, the next outbox retry). The runner sleeps on a stop event, so
SIGTERM wakes it at once; sleeps are measured on the monotonic clock, and an
exception in one iteration is logged and the loop goes on after a pause.
Tests call ``loop(now)`` directly and need neither threads nor sleeps.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from uptime_server.clock import Clock

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
        while not self.stop_event.is_set():
            try:
                delay = self.component.loop(self.clock.now())
            except Exception:  # a component never kills its thread
                log.exception("%s: iteration failed", self.name)
                delay = ERROR_PAUSE
            self.stop_event.wait(max(0.0, min(delay, MAX_SLEEP)))

    def stop(self, grace: float) -> None:
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(timeout=grace + 1)
        self.component.shutdown(grace)
