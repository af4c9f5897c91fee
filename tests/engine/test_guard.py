"""The SSRF guard: the verdict, the URL pre-flight, the resolver and socket walls.

Unit tests first (no connections); then end-to-end refusals through the probe,
only with addresses that stay on this machine, under conftest's loopback net.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from uptime_server.checks.types import CheckSpec
from uptime_server.engine import probe as probe_module
from uptime_server.engine.probe import ProbeConfig
from uptime_server.net.guard import (
    GuardedResolver,
    GuardedSocketFactory,
    RefusedAtConnect,
    TargetNotAllowed,
    address_allowed,
    check_url,
    parse_ip_host,
)

from .conftest import run_check

ALWAYS_REFUSED = [
    "169.254.169.254",  # cloud metadata
    "169.254.0.1",
    "::ffff:169.254.169.254",  # IPv4-mapped
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::0.0.0.0",
    "::ffff:0.0.0.0",
    "fe80::1",
    "fe80::1%1",
    "0.0.0.0",
    "0.1.2.3",
    "::",
    "224.0.0.1",
    "239.255.255.250",
    "ff02::1",
    "255.255.255.255",
    "240.0.0.1",
    "::a9fe:a9fe",  # deprecated IPv4-compatible form
    "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
    "2002:a9fe:a9fe:1:2:3:4:5",
    "2002::1",  # 6to4 of 0.0.0.0
    "64:ff9b:1::a9fe:a9fe",  # local-use NAT64 of 169.254.169.254
    "64:ff9b:1:1234:5678::a9fe:a9fe",  # ... under an operator's own /96 in it
    "64:ff9b:1::e000:1",  # ... of multicast 224.0.0.1
    "fec0::1",  # deprecated site-local
    "feff:ffff::1",
]

PRIVATE = [
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "100.127.255.254",
    "fc00::1",
    "fd12:3456::1",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "64:ff9b::10.0.0.1",
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "64:ff9b:1::7f00:1",  # local-use NAT64 of 127.0.0.1
    "64:ff9b:1::c0a8:101",  # ... of 192.168.1.1
]

PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "2606:4700:4700::1111",
    "172.32.0.1",
    "100.128.0.1",
    "2002:808:808::1",  # 6to4 of 8.8.8.8
    "64:ff9b:1::808:808",  # local-use NAT64 of 8.8.8.8
]


@pytest.mark.parametrize("ip", ALWAYS_REFUSED)
@pytest.mark.parametrize("block_private", [False, True])
def test_it_always_refuses(ip: str, block_private: bool) -> None:
    assert not address_allowed(ip, block_private=block_private)


@pytest.mark.parametrize("ip", PRIVATE)
def test_it_allows_private_by_default(ip: str) -> None:
    assert address_allowed(ip, block_private=False)


@pytest.mark.parametrize("ip", PRIVATE)
def test_it_refuses_private_when_blocking(ip: str) -> None:
    assert not address_allowed(ip, block_private=True)


@pytest.mark.parametrize("ip", PUBLIC)
@pytest.mark.parametrize("block_private", [False, True])
def test_it_allows_public(ip: str, block_private: bool) -> None:
    assert address_allowed(ip, block_private=block_private)


@pytest.mark.parametrize(
    "embedded, ipv4",
    [
        ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
        ("64:ff9b:1::a9fe:a9fe", "169.254.169.254"),
        ("2002:a9fe:a9fe::", "169.254.169.254"),
        ("64:ff9b:1::7f00:1", "127.0.0.1"),
        ("2002:7f00:1::1", "127.0.0.1"),
        ("2002:a00:1::", "10.0.0.1"),
        ("2002:6440:1::", "100.64.0.1"),
        ("64:ff9b:1:ab::5db8:d822", "93.184.216.34"),
        ("2002:5db8:d822::", "93.184.216.34"),
    ],
)
@pytest.mark.parametrize("block_private", [False, True])
def test_embedded_ipv4_is_judged_as_that_ipv4(
    embedded: str, ipv4: str, block_private: bool
) -> None:
    # The network dials the IPv4 address these forms carry (NAT64, 6to4 relay).
    verdict = address_allowed(ipv4, block_private=block_private)
    assert address_allowed(embedded, block_private=block_private) is verdict


def test_it_accepts_address_objects() -> None:
    assert not address_allowed(ipaddress.ip_address("169.254.169.254"), block_private=False)
    assert address_allowed(ipaddress.IPv6Address("::1"), block_private=False)


def test_it_refuses_what_is_not_an_address() -> None:
    assert not address_allowed("example.com", block_private=False)


@pytest.mark.parametrize(
    "host, expected",
    [
        ("2852039166", "169.254.169.254"),  # decimal
        ("0xa9fea9fe", "169.254.169.254"),  # hex
        ("0xA9FEA9FE", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),  # octal
        ("169.254.43518", "169.254.169.254"),  # a.b.c with c 16-bit
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("169.254.169.254.", "169.254.169.254"),
        ("::ffff:a9fe:a9fe", "::ffff:a9fe:a9fe"),
        ("[::1]", "::1"),
        ("example.com", None),
        ("cafe", None),
        ("1.2.3.4.5", None),
    ],
)
def test_it_parses_ip_hosts_like_the_os(host: str, expected: str | None) -> None:
    parsed = parse_ip_host(host)
    assert (str(parsed) if parsed else None) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://2852039166/",
        "http://0xa9fea9fe/",
        "http://0251.0376.0251.0376/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[fe80::1]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[64:ff9b:1::a9fe:a9fe]/",
        "http://[fec0::1]/",
        "http://0.0.0.0:8080/",
        "http://0/",
        "http://[::]:8080/",
        "https://224.0.0.1/",
    ],
)
def test_check_url_refuses_bad_literals(url: str) -> None:
    with pytest.raises(TargetNotAllowed, match="target address not allowed"):
        check_url(url, block_private=False)


@pytest.mark.parametrize("url", ["ftp://example.com/", "file:///etc/passwd", "gopher://x/"])
def test_check_url_refuses_other_schemes(url: str) -> None:
    with pytest.raises(TargetNotAllowed, match="unsupported URL scheme"):
        check_url(url, block_private=False)


def test_check_url_normalises_legacy_numeric_hosts() -> None:
    assert str(check_url("http://0x7f000001:8080/a?b=1", block_private=False)) == (
        "http://127.0.0.1:8080/a?b=1"
    )
    assert str(check_url("http://2130706433/", block_private=False)) == "http://127.0.0.1/"
    assert str(check_url("http://127.1/", block_private=False)) == "http://127.0.0.1/"


def test_check_url_honours_block_private_for_literals() -> None:
    assert str(check_url("http://10.0.0.1/", block_private=False)) == "http://10.0.0.1/"
    for url in ("http://10.0.0.1/", "http://[::1]/", "http://0x7f000001/"):
        with pytest.raises(TargetNotAllowed):
            check_url(url, block_private=True)


def test_check_url_leaves_names_to_the_resolver() -> None:
    # Even with block_private: the name's addresses are checked at resolve time.
    assert str(check_url("https://localhost/x", block_private=True)) == "https://localhost/x"


class _FixedResolver(AbstractResolver):
    """Answers every name with fixed addresses; never touches the network."""

    def __init__(self, *ips: str) -> None:
        self.ips = ips
        self.calls: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.calls.append(host)
        return [
            ResolveResult(
                hostname=host,
                host=ip,
                port=port,
                family=socket.AF_INET6 if ":" in ip else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for ip in self.ips
        ]

    async def close(self) -> None:
        pass


def _resolve(resolver: AbstractResolver, host: str = "svc.example") -> list[ResolveResult]:
    return asyncio.run(resolver.resolve(host, 80, socket.AF_UNSPEC))


def test_resolver_returns_the_checked_addresses() -> None:
    inner = _FixedResolver("10.0.0.5", "fd00::5")
    results = _resolve(GuardedResolver(block_private=False, inner=inner))
    assert [r["host"] for r in results] == ["10.0.0.5", "fd00::5"]
    assert inner.calls == ["svc.example"]  # one lookup, the one that was checked


@pytest.mark.parametrize(
    "ips",
    [
        ("169.254.169.254",),
        ("93.184.216.34", "169.254.169.254"),  # one bad address refuses the whole answer
        ("::ffff:169.254.169.254",),
        ("64:ff9b::a9fe:a9fe",),
        ("0.0.0.0",),
        ("fe80::1%2",),
    ],
)
def test_resolver_refuses_an_answer_with_a_bad_address(ips: tuple[str, ...]) -> None:
    with pytest.raises(TargetNotAllowed):
        _resolve(GuardedResolver(block_private=False, inner=_FixedResolver(*ips)))


def test_resolver_refuses_private_answers_when_blocking() -> None:
    with pytest.raises(TargetNotAllowed):
        _resolve(
            GuardedResolver(block_private=True, inner=_FixedResolver("93.184.216.34", "10.0.0.1"))
        )
    results = _resolve(GuardedResolver(block_private=True, inner=_FixedResolver("93.184.216.34")))
    assert results[0]["host"] == "93.184.216.34"


def test_resolver_treats_an_empty_answer_as_a_lookup_failure() -> None:
    with pytest.raises(socket.gaierror):
        _resolve(GuardedResolver(block_private=False, inner=_FixedResolver()))


def test_default_resolver_checks_numeric_names_getaddrinfo_accepts() -> None:
    # aiohttp hands hex hosts like this to the resolver as if they were names;
    # getaddrinfo parses them locally (no DNS query) into 169.254.169.254.
    async def resolve() -> None:
        await GuardedResolver(block_private=False).resolve("0xa9fea9fe", 80, socket.AF_INET)

    with pytest.raises(TargetNotAllowed):
        asyncio.run(resolve())


def test_default_resolver_allows_localhost_unless_blocking() -> None:
    async def resolve(block_private: bool) -> list[ResolveResult]:
        return await GuardedResolver(block_private=block_private).resolve(
            "localhost", 80, socket.AF_INET
        )

    assert asyncio.run(resolve(False))[0]["host"] == "127.0.0.1"
    with pytest.raises(TargetNotAllowed):
        asyncio.run(resolve(True))


def _addr_info(ip: str) -> tuple:
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    sockaddr = (ip, 80, 0, 0) if ":" in ip else (ip, 80)
    return (family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)


@pytest.mark.parametrize("ip", ["169.254.169.254", "0.0.0.0", "::", "::ffff:169.254.169.254"])
def test_socket_factory_refuses_before_creating_a_socket(ip: str) -> None:
    with pytest.raises(RefusedAtConnect) as info:
        GuardedSocketFactory(block_private=False)(_addr_info(ip))
    assert isinstance(info.value, OSError)  # aiohttp's connect path only handles OSError


def test_socket_factory_blocks_private_when_asked() -> None:
    with pytest.raises(RefusedAtConnect):
        GuardedSocketFactory(block_private=True)(_addr_info("127.0.0.1"))
    sock = GuardedSocketFactory(block_private=False)(_addr_info("127.0.0.1"))
    assert sock.family == socket.AF_INET
    sock.close()


# --- SSRF end to end (only addresses that stay on this machine) ------------


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]", "0"])
def test_unspecified_addresses_are_refused(
    host: str, http_url: str, connections: list[tuple[str, int]]
) -> None:
    port = http_url.rsplit(":", 1)[1]
    result = run_check(CheckSpec(f"http://{host}:{port}/ok"))
    assert result.error == "target address not allowed"
    assert connections == []


def test_loopback_is_refused_when_blocking_private(
    http_url: str, connections: list[tuple[str, int]]
) -> None:
    port = http_url.rsplit(":", 1)[1]
    config = ProbeConfig(block_private=True)
    for url in (f"{http_url}/ok", f"http://localhost:{port}/ok", f"http://0x7f000001:{port}/ok"):
        assert run_check(CheckSpec(url), config).error == "target address not allowed"
    assert connections == []


def test_legacy_numeric_loopback_is_normalised_and_allowed(http_url: str) -> None:
    port = http_url.rsplit(":", 1)[1]
    for host in ("0x7f000001", "2130706433", "127.1"):
        assert run_check(CheckSpec(f"http://{host}:{port}/ok")).passed, host


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://2852039166/",
        "http://0xa9fea9fe/",
        "//169.254.169.254/",
    ],
)
def test_redirect_to_metadata_is_refused_before_connecting(
    target: str,
    http_url: str,
    connections: list[tuple[str, int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked_up: list[str] = []

    async def no_lookup(self, host, port=0, family=0):  # type: ignore[no-untyped-def]
        looked_up.append(host)
        raise AssertionError("the pre-flight check should have refused this hop")

    monkeypatch.setattr(probe_module.GuardedResolver, "resolve", no_lookup)
    result = run_check(CheckSpec(f"{http_url}/redirect-to?to={target}"))
    assert result.error == "target address not allowed"
    assert result.status_code == 302
    port = int(http_url.rsplit(":", 1)[1])
    assert connections == [("127.0.0.1", port)]  # only the first hop
    assert looked_up == []


def test_dns_answer_with_a_refused_address_is_refused(
    fake_dns: dict[str, list[str]], http_url: str, connections: list[tuple[str, int]]
) -> None:
    port = http_url.rsplit(":", 1)[1]
    fake_dns["mixed.test"] = ["127.0.0.1", "0.0.0.0"]
    fake_dns["service.test"] = ["127.0.0.1"]
    mixed = run_check(CheckSpec(f"http://mixed.test:{port}/ok"))
    assert mixed.error == "target address not allowed"
    assert connections == []
    assert run_check(CheckSpec(f"http://service.test:{port}/ok")).passed
    blocking = ProbeConfig(block_private=True)
    blocked = run_check(CheckSpec(f"http://service.test:{port}/ok"), blocking)
    assert blocked.error == "target address not allowed"


def test_resolver_wall_holds_without_the_pre_flight(
    http_url: str, connections: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # aiohttp passes a hex host to the resolver as a name.
    monkeypatch.setattr(probe_module, "check_url", lambda url, block_private: _url(url))
    port = http_url.rsplit(":", 1)[1]
    config = ProbeConfig(block_private=True)
    assert run_check(CheckSpec(f"http://0x7f000001:{port}/ok"), config).error == (
        "target address not allowed"
    )
    assert connections == []


def test_socket_wall_holds_without_the_pre_flight(
    http_url: str, connections: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # aiohttp >= 3.12 (pyproject.toml) has the socket factory: no skip, so a
    # probe that stopped passing it fails here.
    # IP literals skip the resolver; the socket factory still sees the address.
    monkeypatch.setattr(probe_module, "check_url", lambda url, block_private: _url(url))
    port = http_url.rsplit(":", 1)[1]
    assert run_check(CheckSpec(f"http://0.0.0.0:{port}/ok")).error == "target address not allowed"
    assert run_check(CheckSpec(f"{http_url}/ok"), ProbeConfig(block_private=True)).error == (
        "target address not allowed"
    )
    assert connections == []


def _url(url: object) -> URL:
    return url if isinstance(url, URL) else URL(str(url))
