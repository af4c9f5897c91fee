"""A probe for the API's "test now" that cannot reach any network.

Generated requests (schemathesis) create monitors with arbitrary URLs: a real
check of them would send traffic off the machine. ``OfflineProber`` is the
real ``Prober`` (retries, summaries, error strings) with its fetch replaced:
the URL goes through the real SSRF pre-flight, and then the connection is
refused before any socket, resolver or HTTP session exists; an attempt of
any other type is refused without running its probe. Nothing in it
can open a connection, whatever the rest of the code does.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from yarl import URL

from uptime_server.checks.rules import ProbeFailure
from uptime_server.checks.types import CheckSpec, RunResult
from uptime_server.engine.probe import ProbeConfig, Prober
from uptime_server.engine.probe_loop import ProbeLoop
from uptime_server.net.guard import check_url

REFUSED = "connection refused"


class OfflineProber(Prober):
    def __init__(self) -> None:
        super().__init__(ProbeConfig(block_private=True))
        self.fetched: list[str] = []

    async def _fetch(self, spec: CheckSpec, hops: Any) -> tuple[int, bytes, str | None]:
        self.fetched.append(spec.url)
        try:
            url = URL(spec.url)
        except (ValueError, TypeError) as exc:
            raise ProbeFailure("invalid URL") from exc
        check_url(url, block_private=True)
        raise ConnectionRefusedError(errno.ECONNREFUSED, os.strerror(errno.ECONNREFUSED))

    async def attempt(self, spec: CheckSpec) -> RunResult:
        # The other types' probes (tcp, udp, dns, ping) would open sockets:
        # they are refused here, before any of them runs.
        if spec.type in ("http", "https"):
            return await super().attempt(spec)
        self.fetched.append(spec.url)
        return RunResult(False, None, None, REFUSED)

    def _get_session(self) -> Any:
        raise AssertionError("the offline prober has no HTTP session")


async def _no_sleep(_seconds: float) -> None:
    """Retries follow each other at once: a run with 10 retries takes no time."""


def offline_probe_loop() -> ProbeLoop:
    """A real ProbeLoop (thread, semaphore) around an OfflineProber; close() it after."""
    return ProbeLoop(
        ProbeConfig(block_private=True),
        concurrency=4,
        sleep=_no_sleep,
        prober=OfflineProber(),
        name="offline-probes",
    )
