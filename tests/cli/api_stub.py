"""A stand-in for the API on 127.0.0.1 that records every request and answers canned JSON.

For CLI tests of endpoints whose exact requests matter more than the server's
behind them: a test sets the answer per (method, path) and then reads back
what the CLI sent: method, path, query, body and headers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.stub_http import StubHandler


@dataclass
class Seen:
    """One request as the stub received it (path without /api/v1 and without the query)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lowercased
    body: Any

    @property
    def team(self) -> str | None:
        return self.headers.get("x-uptime-team")


Answer = tuple[int, Any]
Route = Answer | Callable[[Seen], Answer]
NOT_FOUND: Answer = (404, {"error": {"code": "NOT_FOUND", "message": "Not found", "details": {}}})


@dataclass
class ApiStub:
    server: ThreadingHTTPServer
    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(self, method: str, path: str, data: Any = None, status: int = 200) -> None:
        """Answer *method* *path* (under /api/v1) with ``{"data": data}``."""
        self.routes[(method, path)] = (status, {"data": data})

    def answer(self, method: str, path: str, answer: Route) -> None:
        """Answer *method* *path* with a (status, body), or what a function of the request says."""
        self.routes[(method, path)] = answer

    def seen(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    def last(self) -> Seen:
        assert self.requests, "the CLI sent no request"
        return self.requests[-1]

    def reset(self) -> None:
        self.requests.clear()


class _Handler(StubHandler):
    def _handle(self) -> None:
        stub: ApiStub = self.server.stub  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = parts.path.removeprefix("/api/v1")
        seen = Seen(
            self.command,
            path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()},
            json.loads(raw) if raw else None,
        )
        stub.requests.append(seen)
        route = stub.routes.get((self.command, path), NOT_FOUND)
        status, body = route(seen) if callable(route) else route
        self.reply(status, json.dumps(body).encode(), "application/json")

    do_GET = do_POST = do_PUT = do_DELETE = _handle


@contextmanager
def api_stub() -> Iterator[ApiStub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    stub = ApiStub(server)
    server.stub = stub  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
