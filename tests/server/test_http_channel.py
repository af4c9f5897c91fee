"""The API server's connections (``wsgi.server.JsonErrorChannel``): a worker
sends its own response, waitress's loop thread leaves the connection alone
meanwhile, and whatever the worker could not send, the loop sends.

A plain WSGI app behind ``create_api_server`` (the daemon's waitress set-up),
on 127.0.0.1, keeps these tests about the server rather than the API.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from waitress import wasyncore

from tests.conftest import recv_until
from uptime_server.config import load_settings
from uptime_server.wsgi.server import JsonErrorChannel, create_api_server

LOOP = "test-api"  # waitress's loop thread
WORKERS = {f"waitress-{i}" for i in range(4)}
BIG = 32 * 1024 * 1024  # far more than a loopback socket's buffers hold


def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """``/big``: BIG bytes in one chunk; anything else: its path back."""
    path = environ["PATH_INFO"]
    body = pattern(BIG) if path == "/big" else path.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def pattern(size: int) -> bytes:
    return bytes(i % 251 for i in range(251)) * (size // 251) + b"x" * (size % 251)


class RecordingChannel(JsonErrorChannel):
    """Notes, each time the channel sends: which thread, what ``writable()``
    answered (for the loop thread) meanwhile, and how many bytes went."""

    seen: list[tuple[str, bool, int]]

    def send(self, data: bytes, do_close: bool = True) -> int:
        writable = self.writable()
        sent = super().send(data, do_close=do_close)
        RecordingChannel.seen.append((threading.current_thread().name, writable, sent))
        return sent


@pytest.fixture
def server(tmp_path: Any) -> Iterator[Any]:
    settings = load_settings({"UPTIME_DATA_DIR": str(tmp_path)})
    server = create_api_server(app, settings, threads=4, host="127.0.0.1", port=0)
    RecordingChannel.seen = []
    server.channel_class = RecordingChannel
    thread = threading.Thread(target=server.run, name=LOOP, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.task_dispatcher.shutdown()
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(5)


def get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path)
    response = conn.getresponse()
    return response.status, response.read()


def test_the_loop_does_not_take_a_connection_as_writable_while_its_worker_sends(server: Any):
    conn = http.client.HTTPConnection("127.0.0.1", server.effective_port, timeout=10)
    for i in range(20):
        assert get(conn, f"/r{i}") == (200, f"/r{i}".encode())
    conn.close()
    # Every small answer went out in the worker's own send(), and the
    # channel said "not writable" to the loop meanwhile.
    assert len(RecordingChannel.seen) >= 20
    assert {thread for thread, _, _ in RecordingChannel.seen} <= WORKERS
    assert not any(writable for _, writable, _ in RecordingChannel.seen)


def test_what_the_worker_cannot_send_the_loop_sends_to_a_slow_reader(server: Any):
    sock = socket.create_connection(("127.0.0.1", server.effective_port), timeout=10)
    sock.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
    # Not read until the worker's send() has filled the socket's buffers.
    deadline = time.monotonic() + 10
    while not any(t in WORKERS and sent == 0 for t, _, sent in RecordingChannel.seen):
        assert time.monotonic() < deadline, "the worker's send() never filled the buffers"
        time.sleep(0.01)
    head, _, body = recv_until(sock, b"\r\n\r\n", 4096).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    rest = bytearray(body)
    while len(rest) < BIG:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before the whole body"
        rest += chunk
    assert bytes(rest) == pattern(BIG)
    # The worker's own send() could not take it all; the loop sent the rest.
    threads = [thread for thread, _, _ in RecordingChannel.seen]
    assert threads[0] in WORKERS and LOOP in threads
    # And the connection serves the next request.
    sock.sendall(b"GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
    response = http.client.HTTPResponse(sock)
    response.begin()
    assert (response.status, response.read()) == (200, b"/after")
    sock.close()


def test_many_keep_alive_connections_each_get_their_own_answers_in_order(server: Any):
    def client(n: int) -> list[tuple[int, bytes]]:
        conn = http.client.HTTPConnection("127.0.0.1", server.effective_port, timeout=10)
        try:
            return [get(conn, f"/c{n}/{i}") for i in range(25)]
        finally:
            conn.close()

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(client, range(16)))
    for n, got in enumerate(answers):
        assert got == [(200, f"/c{n}/{i}".encode()) for i in range(25)]
