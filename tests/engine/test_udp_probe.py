"""The udp probe (engine/probes/udp.py) against real UDP sockets on loopback.

A net (`opened`, autouse) records every socket the probe connects and refuses
any address off this machine, so a broken guard cannot send a datagram out.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from uptime_server.checks.types import RunResult
from uptime_server.engine import probe_loop
from uptime_server.engine.probes import udp
from uptime_server.engine.probes.udp import NO_EXPECTED_TEXT, PORT_UNREACHABLE, udp_attempt
from uptime_server.net.guard import TARGET_NOT_ALLOWED, GuardedResolver, TargetNotAllowed


def _is_local(host: str) -> bool:
    """Loopback, or an unspecified address (which reaches this machine)."""
    addr = ipaddress.ip_address(host)
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        addr = addr.ipv4_mapped
    return addr.is_loopback or addr.is_unspecified


class UdpServer:
    """Answers each datagram with `answer(data)` from a thread; keeps what arrived, in order."""

    def __init__(self, host: str = "127.0.0.1", answer: Callable[[bytes], bytes] | None = None):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.bind((host, 0))
        self.host = host
        self.port: int = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._answer = answer or (lambda data: b"echo:" + data)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            data, peer = self.sock.recvfrom(65535)
            if self._stopping.is_set():
                return
            self.received.append(data)
            self.sock.sendto(self._answer(data), peer)

    def close(self) -> None:
        # A datagram of our own wakes the blocked recvfrom; closing would not.
        self._stopping.set()
        with socket.socket(self.sock.family, socket.SOCK_DGRAM) as waker:
            waker.sendto(b"", (self.host, self.port))
        self._thread.join(5)
        self.sock.close()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback")


@pytest.fixture
def server() -> Iterator[UdpServer]:
    srv = UdpServer()
    yield srv
    srv.close()


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address the probe connected a socket to; non-local ones are refused."""
    seen: list[tuple[str, int]] = []
    real = udp._open_socket

    def open_socket(family: socket.AddressFamily, sockaddr: tuple[str, int]) -> socket.socket:
        seen.append((sockaddr[0], sockaddr[1]))
        if not _is_local(sockaddr[0]):
            raise PermissionError(f"test net: refused datagram to {sockaddr[0]}")
        return real(family, sockaddr)

    monkeypatch.setattr(udp, "_open_socket", open_socket)
    return seen


@pytest.fixture(autouse=True)
def _net(opened: list[tuple[str, int]]) -> Iterator[None]:
    yield
    assert all(_is_local(host) for host, _ in opened), f"tried to send off this machine: {opened}"


def attempt(
    host: str,
    port: int,
    *,
    send: bytes = b"ping",
    expect: str | None = None,
    timeout: float = 5,
    block_private: bool = False,
    loop: str = "asyncio",
) -> RunResult:
    """One attempt on asyncio's event loop, or on uvloop's (the probe loops' default)."""
    with asyncio.Runner(loop_factory=lambda: probe_loop.new_event_loop(loop)) as runner:
        return runner.run(
            udp_attempt(
                host, port, send=send, expect=expect, timeout=timeout, block_private=block_private
            )
        )


# --- replies --------------------------------------------------------------------


def test_it_passes_on_any_reply_without_expect(server: UdpServer) -> None:
    result = attempt("127.0.0.1", server.port, send=b"hello\n")
    assert result.passed, result.error
    assert result.error is None
    assert result.status_code is None
    assert isinstance(result.response_time, int) and result.response_time >= 0
    assert server.received == [b"hello\n"]


def test_it_passes_when_the_reply_contains_the_expected_text(server: UdpServer) -> None:
    result = attempt("127.0.0.1", server.port, send=b"status", expect="echo:stat")
    assert result.passed, result.error
    assert result.response_time is not None


def test_it_fails_when_the_reply_lacks_the_expected_text_without_quoting_it() -> None:
    srv = UdpServer(answer=lambda _data: b"SECRET-TOKEN-42 \x1b[31mred")
    try:
        result = attempt("127.0.0.1", srv.port, expect="PONG")
    finally:
        srv.close()
    assert not result.passed
    assert result.error == NO_EXPECTED_TEXT
    # The reply arrived, so the time to it is known.
    assert result.response_time is not None


def test_the_reply_is_decoded_as_utf8_with_bad_bytes_replaced() -> None:
    srv = UdpServer(answer=lambda _data: b"\xff\xfe caf\xc3\xa9 ready")
    try:
        assert attempt("127.0.0.1", srv.port, expect="café ready").passed
        assert attempt("127.0.0.1", srv.port, expect="\ufffd\ufffd café").passed
    finally:
        srv.close()


def test_only_the_first_reply_is_judged() -> None:
    # A second attempt would see "second" if the probe read past the first reply.
    answers = iter([b"first", b"second"])
    srv = UdpServer(answer=lambda _data: next(answers))
    try:
        assert attempt("127.0.0.1", srv.port, expect="second").error == NO_EXPECTED_TEXT
    finally:
        srv.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_an_empty_payload_is_sent_as_an_empty_datagram(server: UdpServer, loop: str) -> None:
    result = attempt("127.0.0.1", server.port, send=b"", expect="echo:", loop=loop)
    assert result.passed, result.error
    assert server.received == [b""]


@needs_ipv6
@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_it_reaches_an_ipv6_target(host: str) -> None:
    srv = UdpServer("::1")
    try:
        result = attempt(host, srv.port, send=b"six", expect="echo:six")
    finally:
        srv.close()
    assert result.passed, result.error


@pytest.mark.parametrize("listen_on", ["127.0.0.1", pytest.param("::1", marks=needs_ipv6)])
def test_a_host_name_is_resolved_and_its_address_used(
    listen_on: str, fake_dns: dict[str, list[str]], opened: list[tuple[str, int]]
) -> None:
    fake_dns["echo.test"] = [listen_on]
    srv = UdpServer(listen_on)
    try:
        result = attempt("echo.test", srv.port, send=b"by name", expect="echo:by name")
    finally:
        srv.close()
    assert result.passed, result.error
    assert opened == [(listen_on, srv.port)]


@pytest.mark.parametrize(
    ("host", "error"),
    [
        ("missing.test", "DNS lookup failed: missing.test"),
        # The error is shown in terminals and mails: no control characters.
        ("esc\x1b[31m.test", "DNS lookup failed: esc[31m.test"),
    ],
)
def test_an_unknown_host_name_fails_as_a_dns_error(
    host: str, error: str, fake_dns: dict[str, list[str]]
) -> None:
    result = attempt(host, 9)
    assert (result.passed, result.error) == (False, error)


# --- no reply -----------------------------------------------------------------


def test_a_silent_port_fails_with_no_reply_within_the_timeout() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        result = attempt("127.0.0.1", silent.getsockname()[1], send=b"anyone?", timeout=0.2)
        silent.setblocking(False)
        arrived = silent.recv(100)  # the datagram did go to that port
    assert not result.passed
    assert result.error == "no reply within 0.2s"
    assert result.response_time is None
    assert arrived == b"anyone?"


class _HangingResolver(AbstractResolver):
    """A DNS server that never answers."""

    async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[ResolveResult]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def close(self) -> None:
        pass


def test_a_lookup_that_never_ends_fails_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch, opened: list[tuple[str, int]]
) -> None:
    # The guard is real; only its inner resolver hangs. The deadline covers the lookup.
    def guarded(*, block_private: bool) -> GuardedResolver:
        return GuardedResolver(block_private=block_private, inner=_HangingResolver())

    monkeypatch.setattr(udp, "GuardedResolver", guarded)
    result = attempt("slow.test", 9, timeout=0.1)
    assert (result.passed, result.error) == (False, "timeout after 0.1s")
    assert opened == []


def test_cancellation_is_not_turned_into_a_result() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        port = silent.getsockname()[1]

        async def cancelled_attempt() -> RunResult:
            task = asyncio.create_task(
                udp_attempt(
                    "127.0.0.1", port, send=b"x", expect=None, timeout=30, block_private=False
                )
            )
            await asyncio.sleep(0)  # let it reach the receive
            task.cancel()
            return await task

        with pytest.raises(asyncio.CancelledError):
            asyncio.run(cancelled_attempt())


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("expect", [None, "anything"])
def test_a_closed_port_fails_as_port_unreachable(expect: str | None) -> None:
    # Loopback answers a datagram to a closed port with ICMP port unreachable.
    result = attempt("127.0.0.1", _closed_port(), expect=expect)
    assert not result.passed
    assert result.error == PORT_UNREACHABLE
    assert result.response_time is None


@pytest.mark.parametrize("port", [0, 65536, -1])
def test_an_impossible_port_fails_before_anything_is_sent(
    port: int, opened: list[tuple[str, int]]
) -> None:
    result = attempt("127.0.0.1", port)
    assert (result.passed, result.error) == (False, "invalid port")
    assert opened == []


# --- SSRF -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "block_private", "listen_on"),
    [
        # 0.0.0.0 and :: reach this machine; they are refused even when
        # private targets are allowed.
        ("0.0.0.0", False, "127.0.0.1"),
        ("0.0.0.0", True, "127.0.0.1"),
        pytest.param("::", False, "::1", marks=needs_ipv6),
        pytest.param("[::]", False, "::1", marks=needs_ipv6),
        ("127.0.0.1", True, "127.0.0.1"),
        ("127.1", True, "127.0.0.1"),  # a legacy spelling of the same address
        ("localhost.test", True, "127.0.0.1"),  # a name that resolves to loopback
        pytest.param("::ffff:127.0.0.1", True, "127.0.0.1", marks=needs_ipv6),
    ],
)
def test_a_refused_target_gets_nothing(
    host: str,
    block_private: bool,
    listen_on: str,
    fake_dns: dict[str, list[str]],
    opened: list[tuple[str, int]],
) -> None:
    fake_dns["localhost.test"] = ["127.0.0.1"]
    srv = UdpServer(listen_on)
    try:
        refused = attempt(host, srv.port, send=b"refused", block_private=block_private)
        # A datagram that got through would be answered first: the server
        # handles datagrams in the order they arrive.
        control = attempt(listen_on, srv.port, send=b"control")
    finally:
        srv.close()
    assert not refused.passed
    assert refused.error == TARGET_NOT_ALLOWED
    assert refused.response_time is None
    assert control.passed, control.error
    assert srv.received == [b"control"]
    assert opened == [(listen_on, srv.port)]  # the control's socket only


@pytest.mark.parametrize(
    "host",
    ["169.254.169.254", "[fe80::1]", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "metadata.test"],
)
@pytest.mark.parametrize("block_private", [False, True])
def test_metadata_and_link_local_targets_are_refused_before_any_socket(
    host: str, block_private: bool, fake_dns: dict[str, list[str]]
) -> None:
    # Only the verdict: these addresses are never dialled, not even refused by the net.
    fake_dns["metadata.test"] = ["127.0.0.1", "169.254.169.254"]

    async def verdict() -> None:
        await udp.approved_address(host, 53, block_private=block_private)

    with pytest.raises(TargetNotAllowed):
        asyncio.run(verdict())


def test_an_approved_literal_comes_back_in_canonical_form() -> None:
    # The counterpart of the refusals above, and what is dialled: never "127.1" itself.
    address = asyncio.run(udp.approved_address("127.1", 53, block_private=False))
    assert address == (socket.AF_INET, ("127.0.0.1", 53))
