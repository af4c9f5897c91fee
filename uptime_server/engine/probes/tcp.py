"""The tcp attempt: connect, maybe a TLS handshake, maybe send and expect.

The monitor's URL is ``tcp://host:port``. The host is resolved once and every
address the answer holds must pass the SSRF guard (one refused address refuses
the whole answer, as for http); the first one is dialled, so nothing is looked
up twice. With ``tls`` the handshake runs on that connection, SNI and the
name check use the URL's host, ``verify_ssl`` is honoured, and the peer
certificate's expiry is reported like https's. With ``send`` those bytes
(``payload.parse_escapes``) are written after connecting; with ``expect`` the
reply must contain that text (UTF-8, undecodable bytes replaced) before the
deadline, reading at most ``MAX_READ`` bytes.

Response time: from the start of the connect (the name lookup left out) to
its end (and the handshake's), or to the expected bytes when ``expect`` is set.
Errors never quote what the peer sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time

from uptime_server.checks.payload import parse_escapes
from uptime_server.checks.rules import printable
from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.net.certs import PeerCert, peer_cert
from uptime_server.net.errors import describe_error
from uptime_server.net.guard import (
    GuardedResolver,
    TargetNotAllowed,
    address_allowed,
    parse_ip_host,
)
from uptime_server.net.target import parse_host_port_url

MAX_READ = 65536  # bytes read while looking for `expect`
EXPECTED_NOT_RECEIVED = "expected text not received"


class _Failure(Exception):
    """A failure whose message is the error string."""


async def resolve_guarded(host: str, port: int, *, block_private: bool) -> str:
    """The one address to dial for *host*, approved by the guard (or TargetNotAllowed)."""
    literal = parse_ip_host(host)
    if literal is not None:
        if not address_allowed(literal, block_private=block_private):
            raise TargetNotAllowed()
        return str(literal)
    resolver = GuardedResolver(block_private=block_private)
    try:
        answers = await resolver.resolve(host, port, socket.AF_UNSPEC)
    except OSError as exc:
        raise _Failure(f"DNS lookup failed: {host}") from exc
    finally:
        await resolver.close()
    return answers[0]["host"]


async def tcp_attempt(prober: Probing, spec: CheckSpec) -> RunResult:
    """One tcp attempt (see the module doc), never raising (except cancellation)."""
    cert: list[PeerCert | None] = [None]  # set once a handshake showed a certificate
    try:
        async with asyncio.timeout(spec.timeout):
            elapsed = await _check(prober, spec, cert)
    except Exception as exc:  # the module edge: every failure becomes a string
        error = printable(_describe(exc, spec.timeout))
        return RunResult(False, None, None, error).with_cert(cert[0])
    return RunResult(True, elapsed, None, None).with_cert(cert[0])


def _describe(exc: Exception, timeout: int) -> str:
    if isinstance(exc, _Failure):
        return str(exc)
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate verify failed: {str(exc.verify_message or exc.reason).rstrip('.')}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS handshake failed: {(exc.reason or 'error').lower().replace('_', ' ')}"
    if isinstance(exc, ValueError):  # parse_tcp_url, parse_escapes: the stored config
        return f"invalid monitor: {exc}"
    return describe_error(exc, timeout)


async def _check(prober: Probing, spec: CheckSpec, cert: list[PeerCert | None]) -> int:
    opts = spec.options
    host, port = parse_host_port_url(spec.url, "tcp")
    address = await resolve_guarded(host, port, block_private=prober.blocks_private(spec))
    context = prober.ssl_context(spec.verify_ssl) if opts.get("tls") else None
    server_hostname = host if context is not None and parse_ip_host(host) is None else None
    started = time.perf_counter()  # the name lookup is not the service's time
    reader, writer = await asyncio.open_connection(
        address, port, ssl=context, server_hostname=server_hostname
    )
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        if ssl_object is not None:
            cert[0] = peer_cert(ssl_object.getpeercert(binary_form=True))
        elapsed = _ms(started)
        if opts.get("send"):
            writer.write(parse_escapes(opts["send"]))
            await writer.drain()
        expect = opts.get("expect")
        if expect:
            await _read_until(reader, expect)
            elapsed = _ms(started)
        return elapsed
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _read_until(reader: asyncio.StreamReader, expect: str) -> None:
    received = b""
    while len(received) < MAX_READ:
        chunk = await reader.read(MAX_READ - len(received))
        if not chunk:
            break
        received += chunk
        if expect in received.decode("utf-8", errors="replace"):
            return
    raise _Failure(EXPECTED_NOT_RECEIVED)


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)
