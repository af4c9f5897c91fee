"""One udp attempt: send a datagram to ``udp://host:port`` and judge the first reply.

Target: the host is resolved once through the SSRF guard (an IP literal is
judged as it is; a name's whole answer is refused if any address in it is),
and the datagram goes to the first approved address and nowhere else. The
socket is connected to that address, so the kernel drops datagrams from
anyone else and reports the ICMP errors of that peer to us.

Pass: a reply arrives within ``timeout``, and if ``expect`` is set the reply,
decoded as UTF-8 with errors replaced, contains it. Only the first reply is
judged: a UDP service answers a request with one datagram, and a wrong one
should fail at once rather than after the whole timeout.

Fail: "no reply within Ns"; "port unreachable (connection refused)" when the
target answers with ICMP port unreachable; "reply did not contain the expected
text", which never quotes the reply (a monitor must not become a way to read a
service one datagram at a time).

Response time: from the send to the reply, in ms.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass

from uptime_server.checks.payload import parse_escapes
from uptime_server.checks.rules import printable
from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.net.errors import describe_error
from uptime_server.net.guard import (
    GuardedResolver,
    TargetNotAllowed,
    address_allowed,
    parse_ip_host,
)
from uptime_server.net.target import parse_host_port_url

NO_EXPECTED_TEXT = "reply did not contain the expected text"
PORT_UNREACHABLE = "port unreachable (connection refused)"
# No UDP payload is longer (the length field has 16 bits), so no reply is cut.
_MAX_DATAGRAM = 65535

Address = tuple[socket.AddressFamily, tuple[str, int]]


@dataclass
class _Progress:
    sent_at: float | None = None  # perf_counter() when the datagram left


async def udp_check(prober: Probing, spec: CheckSpec) -> RunResult:
    """The registry's udp attempt: ``udp://host:port`` and the ``send``/``expect`` options."""
    opts = spec.options
    try:
        host, port = parse_host_port_url(spec.url, "udp")
        send = parse_escapes(opts.get("send") or "")
    except ValueError as exc:  # a stored target this version refuses
        return _failed(f"invalid monitor: {exc}")
    return await udp_attempt(
        host,
        port,
        send=send,
        expect=opts.get("expect") or None,
        timeout=spec.timeout,
        block_private=prober.blocks_private(spec),
    )


async def udp_attempt(
    host: str,
    port: int,
    *,
    send: bytes,
    expect: str | None,
    timeout: float,
    block_private: bool,
) -> RunResult:
    """One attempt (a run of one), never raising (except cancellation)."""
    progress = _Progress()
    try:
        async with asyncio.timeout(timeout):
            address = await approved_address(host, port, block_private=block_private)
            reply, elapsed = await _exchange(address, send, progress)
    except Exception as exc:  # the module edge: every failure becomes a string
        return _failed(_describe(exc, host, timeout, progress))
    if expect and expect not in reply.decode("utf-8", errors="replace"):
        return RunResult(False, elapsed, None, NO_EXPECTED_TEXT)
    return RunResult(True, elapsed, None, None)


async def approved_address(host: str, port: int, *, block_private: bool) -> Address:
    """The one address the datagram goes to, approved by the guard; raises if refused."""
    if not host:
        raise _Invalid("no host")
    if not 0 < port < 65536:
        raise _Invalid("invalid port")
    literal = parse_ip_host(host)
    if literal is not None:
        if not address_allowed(literal, block_private=block_private):
            raise TargetNotAllowed()
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        return family, (str(literal), port)
    resolver = GuardedResolver(block_private=block_private)
    try:
        results = await resolver.resolve(host, port, socket.AF_UNSPEC)
    finally:
        await resolver.close()
    # The system's preferred address; UDP has no connect to fail over on.
    first = results[0]
    return socket.AddressFamily(first["family"]), (first["host"], port)


async def _exchange(address: Address, payload: bytes, progress: _Progress) -> tuple[bytes, int]:
    """The first reply to *payload*, and the ms from the send to it."""
    # Plain socket calls on the loop rather than a datagram transport: the
    # transport of Python 3.11 silently drops an empty datagram, which is a
    # legitimate request for some services.
    loop = asyncio.get_running_loop()
    sock = _open_socket(*address)
    with sock:
        progress.sent_at = sent_at = time.perf_counter()
        await _send(sock, payload)
        reply = await loop.sock_recv(sock, _MAX_DATAGRAM)
        return reply, round((time.perf_counter() - sent_at) * 1000)


async def _send(sock: socket.socket, payload: bytes) -> None:
    """One datagram, empty or not.

    ``loop.sock_sendall`` will not do: uvloop's (the probe loops' event loop)
    sends nothing at all for an empty payload. A datagram socket sends the
    whole datagram or nothing, so a plain ``send`` is enough; a full send
    buffer (EAGAIN) is tried again shortly, within the attempt's time limit.
    """
    while True:
        try:
            sock.send(payload)
            return
        except (BlockingIOError, InterruptedError):
            await asyncio.sleep(0.005)


def _open_socket(family: socket.AddressFamily, sockaddr: tuple[str, int]) -> socket.socket:
    """A non-blocking UDP socket connected to *sockaddr* (no packet is sent by this)."""
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        sock.connect(sockaddr)
    except BaseException:
        sock.close()
        raise
    return sock


class _Invalid(Exception):
    """A target this probe cannot use; the message is the error string."""


def _describe(exc: Exception, host: str, timeout: float, progress: _Progress) -> str:
    if isinstance(exc, _Invalid | TargetNotAllowed):
        return str(exc)
    if isinstance(exc, TimeoutError):
        if progress.sent_at is None:  # still resolving the host
            return f"timeout after {timeout:g}s"
        return f"no reply within {timeout:g}s"
    if isinstance(exc, socket.gaierror):
        return f"DNS lookup failed: {host}"
    if isinstance(exc, ConnectionRefusedError):  # the ICMP port unreachable
        return PORT_UNREACHABLE
    return describe_error(exc, round(timeout))


def _failed(error: str) -> RunResult:
    return RunResult(False, None, None, printable(error))
