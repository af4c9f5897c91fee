"""A real HTTP target on 127.0.0.1 that counts what it is asked, for engine tests.

Paths:
- ``/ok/<key>``: 200 "ok";
- ``/status/<code>/<key>``: that status;
- ``/slow/<key>?s=SECONDS``: answers after SECONDS; ``arrived[key]`` is set
  when the request comes in, so a test can act while the check is in flight.
- ``/held/<key>?status=CODE``: answers CODE (200) once the test sets
  ``released[key]`` (at most ``HELD_MAX`` seconds); ``arrived[key]`` as above;
  ``held`` is how many are waiting now, ``most_held`` the most at once.
Every request is counted per key in ``hits`` (with its ``time.monotonic()``
in ``arrivals``); the headers of the latest one per key are in
``received_headers``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.stub_http import StubHandler

HELD_MAX = 30.0  # seconds a held request waits for its release, should a test forget


class _Handler(StubHandler):
    server: CountingServer

    def do_GET(self) -> None:  # http.server's naming
        parts = urlsplit(self.path)
        segments = [s for s in parts.path.split("/") if s]
        key = segments[-1] if segments else ""
        self.server.count(key, dict(self.headers.items()))
        status = 200
        if segments and segments[0] == "status":
            status = int(segments[1])
        elif segments and segments[0] == "slow":
            self.server.arrived[key].set()
            time.sleep(float(parse_qs(parts.query).get("s", ["1"])[0]))
        elif segments and segments[0] == "held":
            self.server.arrived[key].set()
            with self.server.holding():
                self.server.released[key].wait(HELD_MAX)
            status = int(parse_qs(parts.query).get("status", ["200"])[0])
        self.reply(status, b"ok" if status == 200 else b"failing", None, {"Connection": "close"})


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: Counter[str] = Counter()
        self.arrivals: defaultdict[str, list[float]] = defaultdict(list)
        self.received_headers: dict[str, dict[str, str]] = {}
        self.arrived: defaultdict[str, threading.Event] = defaultdict(threading.Event)
        self.released: defaultdict[str, threading.Event] = defaultdict(threading.Event)
        self.held = 0
        self.most_held = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def url(self, kind: str, key: str) -> str:
        return f"{self.base}/{kind}/{key}"

    def count(self, key: str, headers: dict[str, str]) -> None:
        with self._lock:
            self.hits[key] += 1
            self.arrivals[key].append(time.monotonic())
            self.received_headers[key] = headers

    @contextmanager
    def holding(self) -> Iterator[None]:
        with self._lock:
            self.held += 1
            self.most_held = max(self.most_held, self.held)
        try:
            yield
        finally:
            with self._lock:
                self.held -= 1

    def stop(self) -> None:
        for event in list(self.released.values()):
            event.set()
        self.shutdown()
        self.server_close()
