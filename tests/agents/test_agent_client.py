"""The agent client's verdict on a failed post: could the server have the request?

A batch whose post may have reached the server is posted again whole (the
answer may be what was lost); one that surely did not may be trimmed of
expired results first. Real sockets on 127.0.0.1 only.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from uptime_server.probe_agent.client import AgentClient, Unreachable


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OneShotServer:
    """Accepts connections on 127.0.0.1; answers each with *reply* (None: hang up)."""

    def __init__(self, reply: bytes | None) -> None:
        self.reply = reply
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.requests += 1
                if self.reply is not None:
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[object]:
    made: list[OneShotServer] = []

    def make(reply: bytes | None) -> OneShotServer:
        made.append(OneShotServer(reply))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _post(port: int) -> Unreachable:
    client = AgentClient(f"http://127.0.0.1:{port}", "upa_test", timeout=5)
    try:
        with pytest.raises(Unreachable) as caught:
            client.post_results("b1", [], {})
    finally:
        client.close()
    return caught.value


def _answer(status: str) -> bytes:
    body = b'{"error": {"code": "X", "message": "x", "details": {}}}'
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def test_no_connection_means_the_server_has_nothing() -> None:
    assert _post(_closed_port()).maybe_delivered is False


def test_a_hang_up_after_the_request_may_have_delivered_it(serve) -> None:
    server = serve(None)
    assert _post(server.port).maybe_delivered is True
    assert server.requests >= 1  # it was read: the server could well have acted on it


def test_a_429_was_not_taken_and_a_503_may_have_been(serve) -> None:
    assert _post(serve(_answer("429 Too Many Requests")).port).maybe_delivered is False
    assert _post(serve(_answer("503 Service Unavailable")).port).maybe_delivered is True
