"""Receivers for channel tests: a webhook endpoint and a fake PagerDuty, on 127.0.0.1.

``Receiver`` records every request (method, path, headers, raw body), answers
from a script of statuses (``fail_first``: that many 503s, then 200s), and does
what a careful webhook receiver does: it checks ``X-Uptime-Signature`` against
its secret and accepts each ``Idempotency-Key`` once, so ``accepted`` holds the
messages a real receiver would act on and ``duplicates`` the retries it dropped.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from tests.stub_http import StubHandler

LOOPBACK = "127.0.0.1"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str = ""
    port: int = 0
    secret: str | None = None
    fail_first: int = 0
    status: int = 200
    body: bytes = b'{"status":"ok"}'  # of every answer
    requests: list[Received] = field(default_factory=list)
    accepted: list[Received] = field(default_factory=list)
    duplicates: list[Received] = field(default_factory=list)
    bad_signatures: list[Received] = field(default_factory=list)
    # Set while a request is being held (see hold()).
    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    hold_next: bool = False

    def handle(self, got: Received) -> int:
        self.requests.append(got)
        if self.hold_next:
            self.hold_next = False
            self.holding.set()
            self.release.wait(30)
        if self.fail_first > 0:
            self.fail_first -= 1
            return 503
        if self.status >= 300:
            return self.status
        if self.secret is not None and not _signed(self.secret, got):
            self.bad_signatures.append(got)
            return 401
        key = got.headers.get("Idempotency-Key")
        if key is not None and any(r.headers.get("Idempotency-Key") == key for r in self.accepted):
            self.duplicates.append(got)
            return 200
        self.accepted.append(got)
        return 200


def _signed(secret: str, got: Received) -> bool:
    # As docs/channels.md#verifying-signatures tells a receiver to check it.
    expected = "sha256=" + hmac.new(secret.encode(), got.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, got.headers.get("X-Uptime-Signature", ""))


@contextlib.contextmanager
def serve(receiver: Receiver | None = None) -> Iterator[Receiver]:
    state = receiver or Receiver()

    class Handler(StubHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            got = Received(self.command, self.path, dict(self.headers), self.rfile.read(length))
            status = state.handle(got)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.reply(status, state.body, "application/json")

        do_GET = do_POST = do_PUT = do_PATCH = _any

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.port = server.server_address[1]
    state.url = f"http://{LOOPBACK}:{state.port}"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
