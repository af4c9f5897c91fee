"""The request handler under the tests' small HTTP servers on 127.0.0.1."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from typing import Any


class StubHandler(BaseHTTPRequestHandler):
    """Answers in one call, and keeps the access log off the test output."""

    def reply(
        self,
        status: int,
        body: bytes,
        content_type: str | None = "text/plain",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass
