"""The dns probe against a real DNS server on 127.0.0.1 (tests/dns_server.py).

Guard refusals of link-local and metadata resolvers are unit verdicts on
`resolver_addresses`, which sends nothing; end to end only 0.0.0.0, [::] and
127.0.0.1 with private targets blocked are refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dns.asyncquery
import dns.rrset
import pytest

from tests.dns_server import RECORDS, DnsServer
from uptime_server.checks.types import RunResult
from uptime_server.engine.probes import dns as dns_probe
from uptime_server.engine.probes.dns import (
    dns_attempt,
    normalise,
    parse_resolver,
    resolver_addresses,
    system_nameservers,
)
from uptime_server.net.guard import TARGET_NOT_ALLOWED, TargetNotAllowed


@pytest.fixture(autouse=True)
def datagrams(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every address a datagram was sent to; off-machine ones are refused (the UDP net).

    conftest's `connections` covers TCP; dnspython sends its UDP queries
    through the datagram transport's sendto, patched here.
    """
    sent: list[tuple[str, int]] = []
    forbidden: list[tuple[str, int]] = []
    transport = asyncio.selector_events._SelectorDatagramTransport  # type: ignore[attr-defined]
    real_sendto = transport.sendto

    def sendto(self: Any, data: bytes, addr: Any = None) -> None:
        target = addr or self._address
        sent.append((target[0], target[1]))
        address = ipaddress.ip_address(target[0].split("%")[0])
        if not (address.is_loopback or address.is_unspecified):  # both stay on this machine
            forbidden.append((target[0], target[1]))
            raise PermissionError(f"test net: refused datagram to {target[0]}")
        real_sendto(self, data, addr)

    monkeypatch.setattr(transport, "sendto", sendto)
    yield sent
    assert not forbidden, f"tried to send off this machine: {forbidden}"


def attempt(query_name: str, record_type: str = "A", **kwargs: Any) -> RunResult:
    kwargs.setdefault("timeout", 10)
    kwargs.setdefault("block_private", False)
    return asyncio.run(dns_attempt(query_name, record_type=record_type, **kwargs))


def assert_passed(result: RunResult) -> None:
    assert (result.passed, result.error) == (True, None)
    assert isinstance(result.response_time, int) and result.response_time >= 0
    assert result.status_code is None


# (record type, query name, a value in the answer, a value not in it)
RECORD_CASES = [
    ("A", "example.test", "192.0.2.1", "192.0.2.2"),
    ("A", "www.example.test", "192.0.2.1", "192.0.2.25"),  # through the CNAME
    ("AAAA", "example.test", "2001:DB8:0::1", "2001:db8::2"),
    ("CNAME", "www.example.test", "Example.Test.", "mail.example.test"),
    ("MX", "example.test.", "20 backup.example.test", "10 backup.example.test"),
    ("NS", "example.test", "ns2.example.test.", "ns3.example.test"),
    ("TXT", "example.test", "hello world", "Hello world"),
    ("TXT", "example.test", '"v=spf1 -all"', "v=spf1"),
    (
        "SOA",
        "example.test",
        "ns1.example.test hostmaster.example.test 2026112401 3600 600 86400 300",
        "ns1.example.test hostmaster.example.test 2026112402 3600 600 86400 300",
    ),
    ("SRV", "_sip._tcp.example.test", "10 5 5060 sip.example.test", "10 5 5061 sip.example.test"),
    ("CAA", "example.test", "0 issue letsencrypt.org", '0 issuewild "letsencrypt.org"'),
    ("PTR", "192.0.2.1", "example.test", "www.example.test"),
    ("PTR", "1.2.0.192.in-addr.arpa", "example.test.", "mail.example.test"),
]
RECORD_IDS = [f"{case[0]}-{case[1]}" for case in RECORD_CASES]


@pytest.mark.parametrize(("record_type", "name", "present", "absent"), RECORD_CASES, ids=RECORD_IDS)
def test_it_passes_when_the_expected_value_is_in_the_answer(
    dns_server: DnsServer, record_type: str, name: str, present: str, absent: str
) -> None:
    result = attempt(name, record_type, resolver=dns_server.address, expected_values=[present])
    assert_passed(result)


@pytest.mark.parametrize(("record_type", "name", "present", "absent"), RECORD_CASES, ids=RECORD_IDS)
def test_it_fails_when_an_expected_value_is_missing(
    dns_server: DnsServer, record_type: str, name: str, present: str, absent: str
) -> None:
    result = attempt(
        name, record_type, resolver=dns_server.address, expected_values=[present, absent]
    )
    assert result.passed is False
    assert result.error == f'expected value "{absent}" not in the answer'
    assert result.response_time is not None


def test_it_passes_on_the_rcode_alone_without_expected_values(dns_server: DnsServer) -> None:
    assert_passed(attempt("example.test", "MX", resolver=dns_server.address))


def test_an_empty_answer_fails_an_expected_value(dns_server: DnsServer) -> None:
    # mail.example.test has an A record but no AAAA: NOERROR with no records.
    result = attempt(
        "mail.example.test", "AAAA", resolver=dns_server.address, expected_values=["::1"]
    )
    assert result.error == 'expected value "::1" not in the answer'


def test_nxdomain_fails_when_noerror_is_expected(dns_server: DnsServer) -> None:
    result = attempt("nothing.example.test", resolver=dns_server.address)
    assert (result.passed, result.error) == (False, "expected rcode NOERROR, got NXDOMAIN")
    assert result.response_time is not None


@pytest.mark.parametrize("expected", ["NXDOMAIN", "nxdomain"])
def test_nxdomain_passes_when_expected(dns_server: DnsServer, expected: str) -> None:
    result = attempt("nothing.example.test", resolver=dns_server.address, expected_rcode=expected)
    assert_passed(result)


def test_an_expected_nxdomain_fails_when_the_name_exists(dns_server: DnsServer) -> None:
    result = attempt("example.test", resolver=dns_server.address, expected_rcode="NXDOMAIN")
    assert result.error == "expected rcode NXDOMAIN, got NOERROR"


def test_servfail_fails(dns_server: DnsServer) -> None:
    result = attempt("fail.example.test", resolver=dns_server.address)
    assert (result.passed, result.error) == (False, "expected rcode NOERROR, got SERVFAIL")


def test_servfail_passes_when_expected(dns_server: DnsServer) -> None:
    assert_passed(
        attempt("fail.example.test", resolver=dns_server.address, expected_rcode="SERVFAIL")
    )


def test_a_slow_answer_within_the_timeout_passes(dns_server: DnsServer) -> None:
    result = attempt(
        "slow.example.test", resolver=dns_server.address, expected_values=["192.0.2.1"]
    )
    assert_passed(result)


def test_a_slow_answer_past_the_timeout_fails(dns_server: DnsServer) -> None:
    assert dns_server.slow_delay > 0.1
    result = attempt("slow.example.test", resolver=dns_server.address, timeout=0.1)
    assert (result.passed, result.response_time, result.error) == (
        False,
        None,
        "timeout after 0.1s",
    )


def test_a_wrong_answer_fails_without_listing_the_answer(dns_server: DnsServer) -> None:
    result = attempt(
        "wrong.example.test", resolver=dns_server.address, expected_values=["192.0.2.1"]
    )
    assert result.error == 'expected value "192.0.2.1" not in the answer'
    assert "10.9.9.9" not in result.error


def test_a_malformed_reply_fails_without_quoting_it(dns_server: DnsServer) -> None:
    result = attempt("garbage.example.test", resolver=dns_server.address)
    assert (result.passed, result.error) == (False, "malformed DNS response")


def test_an_unexpected_exception_is_a_failed_attempt(
    dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("library bug")

    monkeypatch.setattr(dns.asyncquery, "udp_with_fallback", broken)
    result = attempt("example.test", resolver=dns_server.address)
    assert (result.passed, result.error) == (False, "check failed: RuntimeError")


def test_a_connect_timeout_is_not_the_attempts_deadline() -> None:
    assert dns_probe._describe(TimeoutError()) == "connection timed out"


def test_a_truncated_answer_is_asked_again_over_tcp(dns_server: DnsServer) -> None:
    big = next(line for line in RECORDS if line.startswith("big.example.test."))
    value = normalise("TXT", big.split(" TXT ", 1)[1])
    assert len(value) > 512
    result = attempt(
        "big.example.test", "TXT", resolver=dns_server.address, expected_values=[value]
    )
    assert_passed(result)
    transports = {query[0] for query in dns_server.queries_for("big.example.test.")}
    assert transports == {"udp", "tcp"}


def test_a_resolver_named_by_host_is_resolved_through_the_guard(
    dns_server: DnsServer, fake_dns: dict[str, list[str]]
) -> None:
    fake_dns["ns.test"] = ["127.0.0.1"]
    resolver = f"ns.test:{dns_server.port}"
    assert_passed(attempt("by-name.example.test", resolver=resolver, expected_rcode="NXDOMAIN"))
    assert dns_server.queries_for("by-name.example.test.")


def test_a_resolver_name_that_does_not_resolve_fails(fake_dns: dict[str, list[str]]) -> None:
    result = attempt("example.test", resolver="missing.test:53")
    assert result.error == "DNS lookup failed for the resolver: missing.test:53"


def test_the_system_resolvers_are_asked_without_a_resolver(
    dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        dns_probe, "system_nameservers", lambda: [(dns_server.host, dns_server.port)]
    )
    result = attempt("system.example.test", resolver=None, expected_rcode="NXDOMAIN")
    assert_passed(result)
    assert dns_server.queries_for("system.example.test.")


def test_no_system_resolver_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, datagrams: list[tuple[str, int]]
) -> None:
    monkeypatch.setattr(dns_probe, "RESOLV_CONF", str(tmp_path / "missing.conf"))
    result = attempt("example.test", resolver=None)
    assert result.error == "no system resolver configured"
    assert datagrams == []


def test_system_nameservers_reads_resolv_conf(tmp_path: Path) -> None:
    conf = tmp_path / "resolv.conf"
    conf.write_text("search example.test\nnameserver 192.0.2.53\nnameserver 2001:db8::53\n")
    assert system_nameservers(str(conf)) == [("192.0.2.53", 53), ("2001:db8::53", 53)]


# --- the guard ------------------------------------------------------------


@pytest.mark.parametrize(
    ("resolver_at", "block_private"),
    [("0.0.0.0:{port}", False), ("[::]:{port}", False), ("127.0.0.1:{port}", True)],
)
def test_a_refused_resolver_is_never_asked(
    dns_server: DnsServer,
    datagrams: list[tuple[str, int]],
    connections: list[tuple[str, int]],
    resolver_at: str,
    block_private: bool,
) -> None:
    name = f"refused-{block_private}-{resolver_at[:3]}.example.test"
    resolver = resolver_at.format(port=dns_server.port)
    result = attempt(name, resolver=resolver, block_private=block_private)
    assert (result.passed, result.error) == (False, TARGET_NOT_ALLOWED)
    assert (datagrams, connections) == ([], [])
    assert dns_server.queries_for(f"{name}.") == []


def test_a_resolver_name_resolving_to_loopback_is_refused_with_private_blocked(
    dns_server: DnsServer, fake_dns: dict[str, list[str]], datagrams: list[tuple[str, int]]
) -> None:
    fake_dns["ns.test"] = ["127.0.0.1"]
    result = attempt(
        "blocked-name.example.test", resolver=f"ns.test:{dns_server.port}", block_private=True
    )
    assert result.error == TARGET_NOT_ALLOWED
    assert datagrams == []
    assert dns_server.queries_for("blocked-name.example.test.") == []


@pytest.mark.parametrize(
    "resolver",
    [
        "169.254.169.254",
        "169.254.169.254:53",
        "[fe80::1]:53",
        "fd00:ec2::254",  # AWS's IPv6 metadata address is private: refused when blocking
        "[::ffff:169.254.169.254]:53",
        "64:ff9b::a9fe:a9fe",  # NAT64 form of the metadata address
        "2852039166",  # 169.254.169.254 as one number
    ],
)
def test_link_local_and_metadata_resolvers_are_refused(resolver: str) -> None:
    block = resolver.startswith("fd00")
    with pytest.raises(TargetNotAllowed):
        asyncio.run(resolver_addresses(resolver, block_private=block))


@pytest.mark.parametrize(
    ("resolver", "addresses"),
    [
        ("10.0.0.53", [("10.0.0.53", 53)]),
        ("[fd00::53]:5353", [("fd00::53", 5353)]),
        ("127.1:5353", [("127.0.0.1", 5353)]),
    ],
)
def test_private_resolvers_are_allowed_unless_blocked(
    resolver: str, addresses: list[tuple[str, int]]
) -> None:
    assert asyncio.run(resolver_addresses(resolver, block_private=False)) == addresses
    with pytest.raises(TargetNotAllowed):
        asyncio.run(resolver_addresses(resolver, block_private=True))


# --- input ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("resolver", "parsed"),
    [
        ("192.0.2.53", ("192.0.2.53", 53)),
        ("192.0.2.53:5353", ("192.0.2.53", 5353)),
        ("ns.example.test", ("ns.example.test", 53)),
        ("ns.example.test:53", ("ns.example.test", 53)),
        ("2001:db8::53", ("2001:db8::53", 53)),
        ("[2001:db8::53]", ("2001:db8::53", 53)),
        ("[2001:db8::53]:5353", ("2001:db8::53", 5353)),
    ],
)
def test_parse_resolver(resolver: str, parsed: tuple[str, int]) -> None:
    assert parse_resolver(resolver) == parsed


@pytest.mark.parametrize(
    "resolver",
    [
        "",
        ":53",
        "ns.test:",
        "ns.test:0",
        "ns.test:65536",
        "ns.test:x",
        "ns.test:\u0665\u0663",
        "[::1",
        "[::1]53",
    ],
)
def test_parse_resolver_refuses_malformed_input(resolver: str) -> None:
    with pytest.raises(ValueError):
        parse_resolver(resolver)


@pytest.mark.parametrize(
    ("query_name", "record_type", "kwargs", "error"),
    [
        ("example.test", "HINFO", {}, "unsupported record type: HINFO"),
        ("a..b.example.test", "A", {}, "invalid query name"),
        ("example.test", "A", {"resolver": "ns.test:99999"}, "invalid resolver"),
    ],
)
def test_bad_input_fails_without_a_query(
    datagrams: list[tuple[str, int]],
    query_name: str,
    record_type: str,
    kwargs: dict[str, Any],
    error: str,
) -> None:
    kwargs.setdefault("resolver", "127.0.0.1:53")
    result = attempt(query_name, record_type, **kwargs)
    assert (result.passed, result.error) == (False, error)
    assert datagrams == []


# --- normal forms ---------------------------------------------------------


@pytest.mark.parametrize(
    ("record_type", "text", "normal"),
    [
        ("A", "192.0.2.1", "192.0.2.1"),
        ("AAAA", "2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("aaaa", "::FFFF:192.0.2.1", "::ffff:c000:201"),
        ("CNAME", "Example.Test.", "example.test"),
        ("NS", "ns1.example.test", "ns1.example.test"),
        ("PTR", "Host.Example.Test.", "host.example.test"),
        ("MX", "10   Mail.Example.Test.", "10 mail.example.test"),
        ("MX", "0 .", "0 ."),
        ("SRV", "10 5 5060 SIP.example.test.", "10 5 5060 sip.example.test"),
        (
            "SOA",
            "NS1.example.test. Hostmaster.example.test. 1 2 3 4 5",
            "ns1.example.test hostmaster.example.test 1 2 3 4 5",
        ),
        ("TXT", '"hello " "world"', "hello world"),
        ("TXT", '"say \\"hi\\""', 'say "hi"'),
        ("TXT", "v=spf1 -all", "v=spf1 -all"),
        ("TXT", "Case Kept", "Case Kept"),
        ("CAA", '0 ISSUE "letsencrypt.org"', "0 issue letsencrypt.org"),
        ("CAA", "128 iodef mailto:ops@example.test", "128 iodef mailto:ops@example.test"),
        ("A", "Not An  Address", "not an address"),
        ("TXT", '"unterminated', '"unterminated'),
    ],
)
def test_normalise(record_type: str, text: str, normal: str) -> None:
    assert normalise(record_type, text) == normal


def test_normalise_is_idempotent_on_every_served_record() -> None:
    # The answer side runs through normalise too (rdata.to_text()); a normal
    # form fed back must not change, or a user copying it would never match.
    for line in RECORDS:
        name, ttl, rdtype, rdata = line.split(" ", 3)
        for record in dns.rrset.from_text(name, int(ttl), "IN", rdtype, rdata):
            once = normalise(rdtype, record.to_text())
            assert normalise(rdtype, once) == once, line
