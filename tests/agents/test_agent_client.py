"""The agent client's verdict on a failed post: could the server have the request?

A batch whose post may have reached the server is posted again whole (the
answer may be what was lost); one that surely did not may be trimmed of
expired results first. Real sockets on 127.0.0.1 only.
"""

from __future__ import annotations

import socket

import pytest

from tests.conftest import Reply, recv_until
from tests.e2e.conftest import free_port
from uptime_server.probe_agent.client import AgentClient, Unreachable


def _answering(reply: bytes | None, read: list[bytes] | None = None) -> Reply:
    """A handler that reads the request's head, then answers *reply* (None: hangs up)."""

    def handle(sock: socket.socket) -> None:
        data = recv_until(sock, b"\r\n\r\n")
        if read is not None:
            read.append(data)
        if reply is not None:
            sock.sendall(reply)

    return handle


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
    assert _post(free_port())  # nothing listens there.maybe_delivered is False


def test_a_hang_up_after_the_request_may_have_delivered_it(tcp_server) -> None:
    read: list[bytes] = []
    assert _post(tcp_server(_answering(None, read))).maybe_delivered is True
    assert len(read) >= 1  # it was read: the server could well have acted on it


def test_a_429_was_not_taken_and_a_503_may_have_been(tcp_server) -> None:
    too_many = tcp_server(_answering(_answer("429 Too Many Requests")))
    unavailable = tcp_server(_answering(_answer("503 Service Unavailable")))
    assert _post(too_many).maybe_delivered is False
    assert _post(unavailable).maybe_delivered is True
