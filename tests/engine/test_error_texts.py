"""A check's error never quotes the target's response, and carries no control characters."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from tests.engine.conftest import TLSServers, run_check
from uptime_server.checks.rules import printable
from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import ProbeConfig

SECRET = "SECRET"


@pytest.fixture
def raw_target() -> Iterator[Callable[[bytes], str]]:
    """A TCP server on 127.0.0.1 answering every connection with the bytes it is given."""
    sockets: list[socket.socket] = []

    def serve(response: bytes) -> str:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        sockets.append(listener)

        def answer() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(65536)
                    conn.sendall(response)

        threading.Thread(target=answer, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/"

    yield serve
    for listener in sockets:
        listener.close()


@pytest.mark.parametrize(
    "response, error",
    [
        (
            b"HTTP/1.1 2x0 SECRET\x1b[2J\r\nContent-Length: 0\r\n\r\n",
            "invalid HTTP response: bad status line",
        ),
        (b"SECRET-GARBAGE\r\n\r\n", "invalid HTTP response: bad status line"),
        (
            b"HTTP/1.1 200 OK\r\nBad SECRET: v\r\nContent-Length: 0\r\n\r\n",
            "invalid HTTP response: invalid header token",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: SECRET\r\n\r\n",
            "invalid HTTP response: invalid character in Content-Length",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nSECRET\r\n",
            "invalid HTTP response: invalid character in chunk size",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX-SECRET" + b"A" * 9000 + b": v\r\n\r\n",
            "invalid HTTP response: line too long",
        ),
        (
            b"HTTP/1.1 302 Found\r\nLocation: SECRET://x/\r\nContent-Length: 0\r\n\r\n",
            "redirect to an unsupported URL",
        ),
    ],
)
def test_a_malformed_response_is_named_not_quoted(
    raw_target: Callable[[bytes], str], response: bytes, error: str
) -> None:
    result = run_check(CheckSpec(raw_target(response), timeout=5))
    assert result.error == error


def test_a_redirect_targets_host_is_not_named(
    raw_target: Callable[[bytes], str], fake_dns: dict[str, list[str]]
) -> None:
    url = raw_target(
        b"HTTP/1.1 302 Found\r\nLocation: http://secret-value.test/\r\nContent-Length: 0\r\n\r\n"
    )
    assert run_check(CheckSpec(url, timeout=5)).error == (
        "DNS lookup failed for the redirect target"
    )
    # The monitor's own host is the user's: it is named.
    direct = run_check(CheckSpec("http://mine.test/", timeout=5))
    assert direct.error == "DNS lookup failed: mine.test"


def test_a_redirect_targets_certificate_mismatch_does_not_name_its_host(
    raw_target: Callable[[bytes], str], fake_dns: dict[str, list[str]], tls: TLSServers
) -> None:
    fake_dns["secret-value.test"] = ["127.0.0.1"]
    port = tls.valid.rsplit(":", 1)[1]
    location = f"https://secret-value.test:{port}/ok".encode()
    url = raw_target(b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\n\r\n")
    result = run_check(CheckSpec(url, timeout=5), ProbeConfig(ca_bundle=tls.ca_file))
    assert result.error == "TLS certificate verify failed: Hostname mismatch"


def test_printable_drops_control_characters_and_keeps_words_apart() -> None:
    assert printable("a\x1b[31mb\tc\x9bd\x7fe\x00f\r\ng\x07") == "a[31mb cdef  g"
    assert printable("café — ünïcode ✓") == "café — ünïcode ✓"
    assert printable(None) is None
