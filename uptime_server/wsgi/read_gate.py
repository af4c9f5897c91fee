"""API reads one at a time on the embedded database (``UPTIME_API_READ_CONCURRENCY``).

On SQLite an API read is all CPU: the database is a library in this process,
and a read in WAL mode never waits for a writer. Yet ``sqlite3`` lets go of
the GIL around every step of every statement, and each time another of the
32 request threads takes it, so with many clients the threads spend more
time handing the GIL to each other (futex calls and context switches in the
kernel) than answering: under ``wrk -c32`` a list page cost several times
its CPU alone
(bench/README.md#api-reads-one-at-a-time-on-sqlite-uptime_api_read_concurrency-2026-11-24-afternoon).
``ReadGate`` lets *slots* such reads into Flask
at once; the others wait on a semaphore, which costs nothing while they
wait. Reads then queue in arrival order instead of sharing the GIL, which
is the same throughput with less CPU and no convoy.

Only ``GET`` and ``HEAD`` under ``/api/v1/`` pass the gate, except the
sign-in views (``/api/v1/auth/``): an OAuth callback waits on the identity
provider over the network. Writes, heartbeat pings, ``/healthz``, ``/metrics``
and public pages never wait for it. On PostgreSQL a read waits on the
network for each statement, where other requests should run, so the gate is
off there unless asked for. Wraps Flask's ``wsgi_app``, behind the fast
paths (``fast_paths.dispatch``), so waitress and the test client both reach it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from uptime_server.wsgi.types import StartResponse, WsgiApp

READS = frozenset({"GET", "HEAD"})
PREFIX = "/api/v1/"
UNGATED = ("/api/v1/auth/",)


def gated(environ: dict[str, Any]) -> bool:
    """Whether this request is an API read that waits for a slot."""
    if environ.get("REQUEST_METHOD") not in READS:
        return False
    path = environ.get("PATH_INFO", "")
    return path.startswith(PREFIX) and not path.startswith(UNGATED)


class ReadGate:
    """At most *slots* API reads inside *app* at once; everything else passes."""

    def __init__(self, app: WsgiApp, slots: int) -> None:
        if slots < 1:
            raise ValueError("a read gate needs at least one slot")
        self.app = app
        self.slots = slots
        self._free = threading.BoundedSemaphore(slots)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if not gated(environ):
            return self.app(environ, start_response)
        # Flask builds the whole body before it returns (JSON responses), so
        # the slot is free again while waitress sends it.
        with self._free:
            return self.app(environ, start_response)
