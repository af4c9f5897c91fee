"""The agent's connectivity canary: is our own uplink working? (UPTIME_AGENT_CANARY)

Targets are ``host:port`` (a TCP connection must open) or http(s) URLs (a GET
must get an HTTP answer, whatever its status: a 503 still came over our
uplink). The uplink counts as working while
any target answers: the canary is about the agent's network, not about one
of those sites. While every target fails, the agent is degraded: it says so
to the server, and its failed checks are posted as not counted.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence
from datetime import datetime, timedelta

import requests

log = logging.getLogger(__name__)

TIMEOUT = 3.0  # seconds per target


def probe_target(target: str, timeout: float = TIMEOUT) -> bool:
    """Whether *target* answers now."""
    try:
        if "://" in target:
            requests.get(target, timeout=timeout, allow_redirects=False).close()
            return True
        host, _, port = target.rpartition(":")
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except (OSError, ValueError, requests.RequestException):
        return False


class Canary:
    def __init__(self, targets: Sequence[str], *, interval: float = 10.0) -> None:
        self.targets = tuple(targets)
        self.interval = timedelta(seconds=interval)
        self.failing = False
        self._next: datetime | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.targets)

    def check(self, now: datetime) -> bool:
        """Look again if an interval has passed; True while the canary fails."""
        if not self.targets:
            return False
        if self._next is None or now >= self._next:
            failing = not any(probe_target(t) for t in self.targets)
            if failing != self.failing:
                log.warning(
                    "agent canary %s: %s",
                    "failing" if failing else "answering again",
                    ", ".join(self.targets),
                )
            self.failing = failing
            self._next = now + self.interval
        return self.failing
