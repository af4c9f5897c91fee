"""The dns probe: one query to a resolver, judged on the rcode and the answer.

Resolver. ``resolver`` is ``host[:port]`` (``[v6]:port`` for an IPv6 literal
with a port; port 53 by default). A resolver the user names is a target like
any other: an IP literal is judged by the guard, a host name is resolved once
through the guard, and the query goes to exactly the approved addresses. With
no resolver, the system's resolvers (``/etc/resolv.conf``, read by dnspython)
are asked; the administrator chose those, so the guard does not judge them.
Addresses are asked in order; one that cannot be reached hands over to the
next, and the first answer is judged.

Query. UDP first, then TCP when the answer comes back truncated. A PTR query
may name an IP address, which becomes its reverse name (``192.0.2.1`` →
``1.2.0.192.in-addr.arpa``). No EDNS, no DNSSEC: the question a stub resolver
asks.

Pass rule. The rcode equals ``expected_rcode``, and every expected value is
among the answer's records of the queried type (so an A query through a CNAME
chain is judged on the final addresses). An empty answer with the expected
rcode passes when no values are expected. Values are compared in normal form
(``normalise``, applied to the user's values and the answer alike).

Errors. ``expected rcode NOERROR, got NXDOMAIN``, ``expected value "x" not in
the answer`` (the answer itself is never listed), ``timeout after 5s``, the
guard's ``target address not allowed``. Response time: the query's round trip
(UDP, plus TCP after truncation), without the resolver name's lookup.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Sequence

import dns.asyncquery
import dns.asyncresolver
import dns.exception
import dns.message
import dns.name
import dns.nameserver
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.resolver
import dns.reversename

from uptime_server.checks.rules import printable, shorten
from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.net.errors import describe_error
from uptime_server.net.guard import (
    GuardedResolver,
    TargetNotAllowed,
    address_allowed,
    parse_ip_host,
)
from uptime_server.net.target import parse_host_url

RECORD_TYPES = ("A", "AAAA", "CNAME", "MX", "NS", "TXT", "SOA", "SRV", "CAA", "PTR")
DNS_PORT = 53
RESOLV_CONF = "/etc/resolv.conf"

Server = tuple[str, int]  # (IP address, port)


class _Failed(Exception):
    """The attempt failed before an answer arrived; the message is the error."""


async def dns_check(prober: Probing, spec: CheckSpec) -> RunResult:
    """The registry's dns attempt: ``query_name`` or the name of ``dns://name``.

    Defaults: record_type A, the system's resolvers, expected_rcode NOERROR,
    no expected values.
    """
    opts = spec.options
    query_name = opts.get("query_name")
    if not query_name:
        try:
            query_name = parse_host_url(spec.url, "dns")
        except ValueError as exc:  # a stored target this version refuses
            return _failed(f"invalid monitor: url {exc}")
    return await dns_attempt(
        query_name,
        record_type=opts.get("record_type") or "A",
        resolver=opts.get("resolver") or None,
        timeout=spec.timeout,
        expected_rcode=opts.get("expected_rcode") or "NOERROR",
        expected_values=list(opts.get("expected_values") or ()),
        block_private=prober.blocks_private(spec),
    )


async def dns_attempt(
    query_name: str,
    *,
    record_type: str,
    resolver: str | None,
    timeout: float,
    expected_rcode: str = "NOERROR",
    expected_values: Sequence[str] = (),
    block_private: bool,
) -> RunResult:
    """One query, judged; never raises (except cancellation)."""
    try:
        async with asyncio.timeout(timeout):
            query = _make_query(query_name, record_type.upper())
            servers = await _servers(resolver, block_private=block_private)
            response, elapsed = await _ask(query, servers)
        error = _judge(response, record_type.upper(), expected_rcode.upper(), expected_values)
    except TimeoutError:
        return _failed(f"timeout after {timeout:g}s")
    except _Failed as exc:
        return _failed(str(exc))
    except Exception as exc:  # the prober's contract: a surprise is a failed attempt
        return _failed(f"check failed: {type(exc).__name__}")
    return RunResult(error is None, elapsed, None, printable(error))


def _failed(error: str) -> RunResult:
    return RunResult(False, None, None, printable(error))


def _make_query(query_name: str, record_type: str) -> dns.message.Message:
    if record_type not in RECORD_TYPES:
        raise _Failed(f"unsupported record type: {shorten(record_type)}")
    rdtype = dns.rdatatype.from_text(record_type)
    try:
        if rdtype == dns.rdatatype.PTR and _is_ip(query_name):
            name = dns.reversename.from_address(query_name)
        else:
            name = dns.name.from_text(query_name)
    except (ValueError, dns.exception.DNSException):
        raise _Failed("invalid query name") from None
    return dns.message.make_query(name, rdtype)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def parse_resolver(resolver: str) -> tuple[str, int]:
    """``host[:port]`` → (host, port). ``[v6]:port``, or a bare IPv6 literal without port."""
    text = resolver.strip()
    host, port = text, str(DNS_PORT)
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError("invalid resolver")
        host, port = inside, rest[1:] or port
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValueError("invalid resolver")
    return host, int(port)


async def resolver_addresses(resolver: str, *, block_private: bool) -> list[Server]:
    """The addresses the user's resolver may be asked at, or TargetNotAllowed.

    An IP literal is judged without any I/O; a name is resolved once, through
    the guard (one refused address refuses the resolver).
    """
    host, port = parse_resolver(resolver)
    literal = parse_ip_host(host)
    if literal is not None:
        if not address_allowed(literal, block_private=block_private):
            raise TargetNotAllowed()
        return [(str(literal), port)]
    guarded = GuardedResolver(block_private=block_private)
    try:
        results = await guarded.resolve(host, port, socket.AF_UNSPEC)
    finally:
        await guarded.close()
    return list(dict.fromkeys((result["host"], port) for result in results))


def system_nameservers(filename: str | None = None) -> list[Server]:
    """The system's plain-DNS resolvers, as dnspython reads them from *filename*.

    Read on every attempt (a small file), so a changed resolv.conf counts
    without a restart.
    """
    config = dns.asyncresolver.Resolver(filename=filename or RESOLV_CONF)
    servers = []
    for nameserver in config.nameservers:
        if isinstance(nameserver, str):
            servers.append((nameserver, config.nameserver_ports.get(nameserver, config.port)))
        elif isinstance(nameserver, dns.nameserver.Do53Nameserver):
            servers.append((nameserver.address, nameserver.port))
    return servers


async def _servers(resolver: str | None, *, block_private: bool) -> list[Server]:
    if resolver is None:
        try:
            servers = system_nameservers()
        except dns.resolver.NoResolverConfiguration:
            servers = []
        if not servers:
            raise _Failed("no system resolver configured")
        return servers
    try:
        return await resolver_addresses(resolver, block_private=block_private)
    except ValueError:
        raise _Failed("invalid resolver") from None
    except TargetNotAllowed as exc:
        raise _Failed(str(exc)) from None
    except OSError:  # socket.gaierror and kin: the resolver's own name did not resolve
        raise _Failed(f"DNS lookup failed for the resolver: {shorten(resolver)}") from None


async def _ask(
    query: dns.message.Message, servers: list[Server]
) -> tuple[dns.message.Message, int]:
    """The first answer from *servers*, asked in order, and its round trip in ms."""
    error = "no resolver answered"
    for where, port in servers:
        started = time.perf_counter()
        try:
            # ignore_unexpected: a datagram from another source is dropped, not
            # taken as the answer or as a failure.
            response, _ = await dns.asyncquery.udp_with_fallback(
                query, where, port=port, ignore_unexpected=True
            )
        except (OSError, EOFError, dns.exception.DNSException) as exc:
            error = _describe(exc)
            continue
        return response, round((time.perf_counter() - started) * 1000)
    raise _Failed(error)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "resolver closed the connection"
    if isinstance(exc, dns.exception.FormError):
        return "malformed DNS response"
    if isinstance(exc, dns.exception.DNSException):
        return "invalid DNS response"
    if isinstance(exc, TimeoutError):  # a TCP connect's ETIMEDOUT, not the attempt's deadline
        return "connection timed out"
    return describe_error(exc, 0)  # OSError: "connection refused" and kin


def _judge(
    response: dns.message.Message,
    record_type: str,
    expected_rcode: str,
    expected_values: Sequence[str],
) -> str | None:
    rcode = dns.rcode.to_text(response.rcode())
    if rcode != expected_rcode:
        return f"expected rcode {shorten(expected_rcode)}, got {rcode}"
    rdtype = dns.rdatatype.from_text(record_type)
    answer = {
        normalise(record_type, rdata.to_text())
        for rrset in response.answer
        if rrset.rdtype == rdtype
        for rdata in rrset
    }
    for value in expected_values:
        if normalise(record_type, value) not in answer:
            return f'expected value "{shorten(value)}" not in the answer'
    return None


def normalise(record_type: str, text: str) -> str:
    """The form a record's value is compared in; the same for expected values and answers.

    - A, AAAA: the address as ``ipaddress`` prints it (IPv6 compressed, lower case).
    - CNAME, NS, PTR: the name in lower case, without the trailing dot
      (``mail.example.test``; internationalised names in their ASCII form).
    - MX: ``preference name`` (``10 mail.example.test``).
    - SRV: ``priority weight port target`` (``10 5 5060 sip.example.test``).
    - SOA: ``mname rname serial refresh retry expire minimum``.
    - TXT: the record's strings joined, without quotes (``v=spf1 -all``). A
      value written in zone-file form (starting with a quote: ``"a" "b"``) is
      read as such; anything else is taken literally.
    - CAA: ``flags tag value``, tag in lower case, value without quotes
      (``0 issue letsencrypt.org``).

    Text that does not parse as the record type is compared with its
    whitespace collapsed (and in lower case but for TXT): it can only match an
    answer written the same way.
    """
    record_type = record_type.upper()
    if record_type == "TXT" and not text.lstrip().startswith('"'):
        return text
    try:
        rdtype = dns.rdatatype.from_text(record_type)
        rdata = dns.rdata.from_text(
            dns.rdataclass.IN, rdtype, text, origin=dns.name.root, relativize=False
        )
    except (ValueError, dns.exception.DNSException):
        collapsed = " ".join(text.split())
        return collapsed if record_type == "TXT" else collapsed.lower()
    return _normal_form(rdata)


def _name(name: dns.name.Name) -> str:
    return name.to_text(omit_final_dot=True).lower()  # the root stays "."


def _normal_form(rdata: dns.rdata.Rdata) -> str:
    rdtype = rdata.rdtype
    if rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA):
        return str(ipaddress.ip_address(rdata.address))
    if rdtype in (dns.rdatatype.CNAME, dns.rdatatype.NS, dns.rdatatype.PTR):
        return _name(rdata.target)
    if rdtype == dns.rdatatype.MX:
        return f"{rdata.preference} {_name(rdata.exchange)}"
    if rdtype == dns.rdatatype.SRV:
        return f"{rdata.priority} {rdata.weight} {rdata.port} {_name(rdata.target)}"
    if rdtype == dns.rdatatype.SOA:
        names = f"{_name(rdata.mname)} {_name(rdata.rname)}"
        timers = (rdata.serial, rdata.refresh, rdata.retry, rdata.expire, rdata.minimum)
        return " ".join((names, *map(str, timers)))
    if rdtype == dns.rdatatype.TXT:
        return "".join(part.decode("utf-8", "replace") for part in rdata.strings)
    if rdtype == dns.rdatatype.CAA:
        tag = rdata.tag.decode("ascii", "replace").lower()
        return f"{rdata.flags} {tag} {rdata.value.decode('utf-8', 'replace')}"
    return rdata.to_text()
