"""Outbound safety: which addresses a check may connect to (docs/api.md#outbound-safety).

Three walls, each enough on its own for the case it sees:

1. `check_url` runs on the monitor's URL and on every redirect hop before any
   connection. It refuses non-http(s) schemes and IP-literal hosts that fail the
   verdict, including legacy numeric forms (`2852039166`, `0xa9fea9fe`,
   `0251.0376.0251.0376`, `127.1`) which it rewrites to dotted-quad so the
   connector never has to interpret them.
2. `GuardedResolver` checks every address DNS returns and hands exactly those
   addresses to the connector, so there is no second lookup to rebind.
3. `GuardedSocketFactory` checks the socket address right before `connect()`,
   the one place that sees what is really dialled (IP literals skip the
   resolver in aiohttp).
"""

from __future__ import annotations

import errno
import functools
import ipaddress
import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

TARGET_NOT_ALLOWED = "target address not allowed"

_net = ipaddress.ip_network

# Never a legitimate monitoring target: cloud metadata lives in link-local,
# and the unspecified/"this network" addresses connect to the local host.
_ALWAYS_REFUSED = (
    _net("0.0.0.0/8"),
    _net("169.254.0.0/16"),
    _net("224.0.0.0/4"),  # multicast
    _net("240.0.0.0/4"),  # reserved, includes 255.255.255.255
    _net("::/128"),
    _net("fe80::/10"),
    _net("fec0::/10"),  # deprecated site-local (RFC 3879): no legitimate target left
    _net("ff00::/8"),  # multicast
)

# Allowed by default (a self-hosted monitor watches internal services), refused
# with block_private. Anything else that is not globally routable is refused
# then too, via `is_global`.
_PRIVATE = (
    _net("127.0.0.0/8"),
    _net("10.0.0.0/8"),
    _net("172.16.0.0/12"),
    _net("192.168.0.0/16"),
    _net("100.64.0.0/10"),
    _net("fc00::/7"),
    _net("::1/128"),
)

# IPv6 prefixes that carry an IPv4 address the network will really dial:
# NAT64 well-known (RFC 6052) and local-use (RFC 8215) prefixes, both with the
# IPv4 address in the last 32 bits, the /96 form NAT64 gateways use; and 6to4
# (RFC 3056), which carries it in bits 16-47.
_NAT64 = (_net("64:ff9b::/96"), _net("64:ff9b:1::/48"))
# Deprecated IPv4-compatible IPv6 (::a.b.c.d); nothing legitimate uses it.
_IPV4_COMPATIBLE = _net("::/96")
_IPV6_LOOPBACK = ipaddress.IPv6Address("::1")


class TargetNotAllowed(Exception):
    """The target URL or one of its addresses may not be connected to."""

    def __init__(self, message: str = TARGET_NOT_ALLOWED) -> None:
        super().__init__(message)


class RefusedAtConnect(OSError):
    """Raised inside aiohttp's connect path, which only tolerates OSError."""

    def __init__(self) -> None:
        super().__init__(errno.EACCES, TARGET_NOT_ALLOWED)


def _unwrap(addr: IPAddress) -> IPAddress:
    """The IPv4 address hidden in an IPv4-mapped, NAT64 or 6to4 IPv6 address, if any."""
    if isinstance(addr, ipaddress.IPv4Address):
        return addr
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if any(addr in net for net in _NAT64):
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr.sixtofour is not None:
        return addr.sixtofour
    return addr


@functools.lru_cache(maxsize=4096)
def address_allowed(ip: str | IPAddress, *, block_private: bool) -> bool:
    """Pure verdict on one address. A string that is not an address is refused.

    Cached: the verdict depends on nothing else, and every connection asks.
    """
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip)
        except ValueError:
            return False
    addr = _unwrap(ip)
    if any(addr in net for net in _ALWAYS_REFUSED):
        return False
    if addr in _IPV4_COMPATIBLE and addr != _IPV6_LOOPBACK:
        return False
    if block_private:
        return not any(addr in net for net in _PRIVATE) and addr.is_global
    return True


def parse_ip_host(host: str) -> IPAddress | None:
    """The address an IP-literal host denotes, or None for a DNS name.

    Uses inet_aton semantics for IPv4, as getaddrinfo does, so every legacy
    numeric spelling maps to the address the OS would dial.
    """
    host = host.removesuffix(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def check_url(url: str | URL, *, block_private: bool) -> URL:
    """Pre-flight on one hop: returns the URL to request, or raises TargetNotAllowed.

    IP-literal hosts come back in canonical form; DNS names are left for the
    resolver to check.
    """
    u = url if isinstance(url, URL) else URL(url)
    if u.scheme not in ("http", "https"):
        raise TargetNotAllowed(f"unsupported URL scheme: {u.scheme or 'none'}")
    host = u.raw_host
    if not host:
        raise TargetNotAllowed("URL has no host")
    addr = parse_ip_host(host)
    if addr is None:
        return u
    if not address_allowed(addr, block_private=block_private):
        raise TargetNotAllowed()
    canonical = str(addr)
    return u if canonical == host else u.with_host(canonical)


class GuardedResolver(AbstractResolver):
    """Resolves with aiohttp's threaded resolver and refuses any bad answer.

    One refused address refuses the whole answer: picking the good ones would
    let an attacker mix a public address with the metadata one and win whenever
    the public one is unreachable.
    """

    def __init__(self, *, block_private: bool, inner: AbstractResolver | None = None) -> None:
        self._block_private = block_private
        self._inner = inner if inner is not None else aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        if not results:
            raise socket.gaierror(socket.EAI_NONAME, f"no addresses for {host}")
        for result in results:
            if not address_allowed(result["host"], block_private=self._block_private):
                raise TargetNotAllowed()
        # Returned as-is: aiohttp connects to these numeric hosts without
        # resolving again.
        return results

    async def close(self) -> None:
        await self._inner.close()


class GuardedSocketFactory:
    """aiohttp `socket_factory`: the last check, on the address really dialled."""

    def __init__(self, *, block_private: bool) -> None:
        self._block_private = block_private

    def __call__(self, addr_info: tuple[Any, ...]) -> socket.socket:
        family, type_, proto, _canonname, sockaddr = addr_info
        if not address_allowed(sockaddr[0], block_private=self._block_private):
            raise RefusedAtConnect()
        return socket.socket(family=family, type=type_, proto=proto)
