"""The ping probe: real echoes to loopback, the ICMP permission check, the verdict.

Only 127.0.0.1 and ::1 are ever pinged: `echoes` (autouse) wraps icmplib's
send, records every destination and refuses any other, so a broken guard
cannot send a packet off this machine.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Iterator

import pytest
from icmplib import Host
from icmplib.sockets import ICMPSocket

from uptime_server.checks.types import RunResult
from uptime_server.engine.probes import icmp as ping
from uptime_server.engine.probes.icmp import (
    ICMP_NOT_PERMITTED,
    icmp_mode,
    judge,
    ping_attempt,
)

_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


@pytest.fixture(autouse=True)
def echoes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every address an echo request went to; anything but loopback is refused."""
    sent: list[str] = []
    forbidden: list[str] = []
    real_send = ICMPSocket.send

    def send(self, request):  # type: ignore[no-untyped-def]
        sent.append(request.destination)
        if ipaddress.ip_address(request.destination) not in _LOOPBACK:
            forbidden.append(request.destination)
            raise PermissionError(f"test net: refused echo to {request.destination}")
        return real_send(self, request)

    monkeypatch.setattr(ICMPSocket, "send", send)
    yield sent
    assert not forbidden, f"tried to ping off this machine: {forbidden}"


def _ping(host: str, **options: object) -> RunResult:
    options = {"timeout": 2, "block_private": False, **options}
    return asyncio.run(ping_attempt(host, **options))  # type: ignore[arg-type]


needs_icmp = pytest.mark.skipif(
    icmp_mode() is None, reason="this process may open no ICMP socket (see docs/systemd.md)"
)


# -- real echoes on loopback ---------------------------------------------------


@needs_icmp
@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_it_pings_loopback(host: str, echoes: list[str]) -> None:
    result = _ping(host, count=2)

    assert result.passed, result.error
    assert result.error is None
    assert isinstance(result.response_time, int) and result.response_time >= 0
    assert result.status_code is None
    assert len(echoes) == 2 and ipaddress.ip_address(echoes[0]) in _LOOPBACK


@needs_icmp
def test_it_sends_count_echoes_to_the_approved_address(echoes: list[str]) -> None:
    # "127.1" is 127.0.0.1 in inet_aton's legacy form: the guard's reading is
    # what gets pinged, not a second interpretation by icmplib.
    assert _ping("127.1", count=3).passed

    assert echoes == ["127.0.0.1"] * 3


# -- ICMP permission -----------------------------------------------------------


class _Opener:
    """A socket opener whose verdict per mode the test chooses; counts its calls."""

    def __init__(self, *, unprivileged: bool, raw: bool) -> None:
        self.allowed = {False: unprivileged, True: raw}
        self.calls: list[bool] = []

    def __call__(self, privileged: bool) -> socket.socket:
        self.calls.append(privileged)
        if not self.allowed[privileged]:
            raise PermissionError(1, "Operation not permitted")
        return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # any socket will do


@pytest.mark.parametrize(
    ("unprivileged", "raw", "mode"),
    [
        (True, True, "unprivileged"),  # preferred: needs no capability
        (True, False, "unprivileged"),
        (False, True, "privileged"),
        (False, False, None),
    ],
)
def test_icmp_mode_prefers_unprivileged_sockets(unprivileged: bool, raw: bool, mode: str) -> None:
    assert icmp_mode(_Opener(unprivileged=unprivileged, raw=raw)) == mode


def test_icmp_mode_is_detected_once_per_process() -> None:
    opener = _Opener(unprivileged=False, raw=True)

    assert icmp_mode(opener) == "privileged"
    assert icmp_mode(opener) == "privileged"
    assert opener.calls == [False, True]


def test_it_says_what_to_change_when_no_icmp_socket_is_permitted(
    monkeypatch: pytest.MonkeyPatch, echoes: list[str]
) -> None:
    denied = _Opener(unprivileged=False, raw=False)
    monkeypatch.setattr(ping, "icmp_mode", functools.partial(icmp_mode, denied))
    monkeypatch.setattr(ping, "async_ping", _must_not_ping)

    result = _ping("127.0.0.1")

    assert not result.passed
    assert result.error == ICMP_NOT_PERMITTED
    assert "net.ipv4.ping_group_range" in result.error
    assert "AmbientCapabilities=CAP_NET_RAW" in result.error
    assert denied.calls == [False, True]
    assert echoes == []


# -- SSRF: refused before any packet ----------------------------------------------


async def _must_not_ping(*args: object, **kwargs: object) -> Host:
    raise AssertionError("icmplib was called for a refused target")


@pytest.mark.parametrize(
    ("host", "block_private"),
    [
        ("0.0.0.0", False),
        ("::", False),
        ("[::]", False),
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),  # the name's answers are judged, not just literals
    ],
)
def test_it_refuses_a_target_the_guard_refuses(
    host: str, block_private: bool, monkeypatch: pytest.MonkeyPatch, echoes: list[str]
) -> None:
    monkeypatch.setattr(ping, "async_ping", _must_not_ping)

    result = _ping(host, block_private=block_private)

    assert not result.passed
    assert result.error == "target address not allowed"
    assert result.response_time is None
    assert echoes == []


def test_a_name_that_does_not_resolve_is_a_dns_failure(
    monkeypatch: pytest.MonkeyPatch, echoes: list[str]
) -> None:
    # No real lookup: a name that fails would go to the machine's resolvers.
    async def getaddrinfo(self, host, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(ping, "async_ping", _must_not_ping)

    result = _ping("nowhere.example.test")

    assert not result.passed
    assert result.error == "DNS lookup failed: nowhere.example.test"
    assert echoes == []


def test_the_whole_attempt_keeps_to_its_time_limit(
    monkeypatch: pytest.MonkeyPatch, echoes: list[str]
) -> None:
    # A resolver that never answers: the limit covers the lookup too.
    async def getaddrinfo(self, host, *args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.Event().wait()

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)

    result = _ping("slow.example.test", timeout=0.2)

    assert not result.passed
    assert result.error == "timeout after 0.2s"
    assert echoes == []


# -- the verdict on icmplib's summary ----------------------------------------------


def test_all_answered_passes_with_the_average_round_trip() -> None:
    result = judge(Host("192.0.2.1", 3, [10.0, 20.0, 31.0]), max_packet_loss=0)

    assert result.passed and result.error is None
    assert result.response_time == 20  # 20.33 ms, whole ms


def test_no_reply_is_full_packet_loss_whatever_the_allowance() -> None:
    result = judge(Host("192.0.2.1", 3, []), max_packet_loss=100)

    assert not result.passed
    assert result.error == "100% packet loss (3 sent)"
    assert result.response_time is None


def test_no_echo_sent_is_host_unreachable() -> None:
    result = judge(Host("192.0.2.1", 0, []), max_packet_loss=0)

    assert (result.passed, result.error) == (False, "host unreachable")


@pytest.mark.parametrize(
    ("sent", "rtts", "allowed", "error"),
    [
        (3, [5.0, 7.0], 0, "packet loss 33% over the allowed 0%"),
        # The loss is shown with the decimals that make it read as over.
        (3, [5.0, 7.0], 33, "packet loss 33.3% over the allowed 33%"),
        (3, [5.0, 7.0], 33.3, "packet loss 33.33% over the allowed 33.3%"),
        (10, [2.0] * 5, 49.5, "packet loss 50% over the allowed 49.5%"),
        (4, [2.0], 50, "packet loss 75% over the allowed 50%"),
    ],
)
def test_packet_loss_over_the_allowance_fails(
    sent: int, rtts: list[float], allowed: float, error: str
) -> None:
    result = judge(Host("192.0.2.1", sent, rtts), max_packet_loss=allowed)

    assert not result.passed
    assert result.error == error
    # The replies that came back still time the host.
    assert result.response_time == round(sum(rtts) / len(rtts))


@pytest.mark.parametrize(
    ("sent", "rtts", "allowed"),
    [
        (3, [5.0, 7.0], 34),  # 33.3% lost
        (10, [1.0] * 5, 50),  # exactly the allowance
        (4, [1.0], 75),
    ],
)
def test_packet_loss_within_the_allowance_passes(
    sent: int, rtts: list[float], allowed: float
) -> None:
    result = judge(Host("192.0.2.1", sent, rtts), max_packet_loss=allowed)

    assert result.passed and result.error is None


def test_the_echoes_fit_the_time_limit() -> None:
    for count, budget in [(1, 30), (3, 30), (3, 1.8), (10, 0.5), (10, 60)]:
        interval, reply_wait = ping._echo_timing(count, budget)

        assert (count - 1) * interval + count * reply_wait == pytest.approx(budget)
        assert 0 < interval <= 1
        assert reply_wait >= budget / (2 * count) - 1e-9
