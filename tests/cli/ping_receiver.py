"""A stand-in for the server's ping endpoints: records each request, answers as told.

Runs on 127.0.0.1. By default every request gets ``200 OK``; a test queues
statuses per path (the last one repeats), serves JSON on API paths (a
monitor with its ``ping_url``), or holds a path's requests unanswered until
the receiver closes, to play a server that is slow.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.stub_http import StubHandler


@dataclass(frozen=True)
class Seen:
    method: str
    path: str  # with the query string
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


class _Handler(StubHandler):
    server: _Server

    def do_GET(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        receiver = self.server.receiver
        path = urlsplit(self.path).path
        receiver.record(Seen(self.command, self.path, body, dict(self.headers.items())))
        if path in receiver.held:
            receiver.closing.wait(30)
            return  # no answer at all
        if path in receiver.documents:
            status, document = receiver.documents[path]
            self.reply(status, json.dumps(document).encode(), "application/json")
            return
        answer = receiver.next_answer(path)
        text = b"OK" if answer.status < 300 else b"no"
        self.reply(answer.status, b"" if self.command == "HEAD" else text, headers=answer.headers)

    do_POST = do_HEAD = do_PUT = do_GET


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    receiver: Receiver


class Receiver:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.answers: dict[str, list[Answer]] = {}
        self.documents: dict[str, tuple[int, Any]] = {}
        self.held: set[str] = set()
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.receiver = self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def ping_url(self, token: str = "tok") -> str:
        return f"{self.url}/ping/{token}"

    def answer(self, path: str, *statuses: int, headers: dict[str, str] | None = None) -> None:
        """Answer *path* with these statuses in turn, then the last one again."""
        self.answers[path] = [Answer(s, headers or {}) for s in statuses]

    def serve_json(self, path: str, document: Any, status: int = 200) -> None:
        self.documents[path] = (status, document)

    def hold(self, path: str) -> None:
        """Leave requests to *path* unanswered until the receiver closes."""
        self.held.add(path)

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def next_answer(self, path: str) -> Answer:
        with self._lock:
            queued = self.answers.get(path)
            if not queued:
                return Answer(200)
            return queued.pop(0) if len(queued) > 1 else queued[0]

    def paths(self) -> list[str]:
        with self._lock:
            return [s.path for s in self.seen]

    def pings(self) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.path.startswith("/ping/")]

    @contextmanager
    def running(self) -> Iterator[Receiver]:
        thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.closing.set()
            self._server.shutdown()
            self._server.server_close()
            thread.join(5)
