"""A real HTTP target on 127.0.0.1 that holds every request until released.

``waiting`` counts the requests it holds; ``wait_for(n)`` blocks until that
many have arrived, so a test knows its checks are in flight, and hanging,
without sleeping. Every request is answered 200 "ok" once ``release()`` is
called (or after ``MAX_HOLD`` seconds, so a broken test cannot hang forever).
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

from tests.stub_http import StubHandler

MAX_HOLD = 120.0


class _Handler(StubHandler):
    server: HangingTarget

    def do_GET(self) -> None:  # http.server's naming
        self.server.arrive()
        try:
            self.server.released.wait(MAX_HOLD)
            self.reply(200, b"ok", None, {"Connection": "close"})
        finally:
            self.server.leave()


class HangingTarget(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.released = threading.Event()
        self.waiting = 0
        self.arrived = 0
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()

    def handle_error(self, request: object, client_address: object) -> None:
        """A checker that gave up (its timeout, a cancelled run) is not an error here."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/slow"

    def arrive(self) -> None:
        with self._cond:
            self.waiting += 1
            self.arrived += 1
            self._cond.notify_all()

    def leave(self) -> None:
        with self._cond:
            self.waiting -= 1
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> bool:
        """True once *count* requests are held at the same time."""
        with self._cond:
            return self._cond.wait_for(lambda: self.waiting >= count, timeout)

    def release(self) -> None:
        self.released.set()

    def stop(self) -> None:
        self.release()
        self.shutdown()
        self.server_close()
