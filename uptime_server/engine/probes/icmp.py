"""The ping probe: ICMP echo requests to one host, judged on packet loss.

Target. The host is resolved once, every address checked by the SSRF guard
(`net.guard`), and exactly the first approved address is pinged; icmplib never
sees a name, so it cannot resolve it again to something else.

ICMP sockets. Linux lets a process send echo requests two ways: an unprivileged
"ping socket" (SOCK_DGRAM, allowed when the process's group is inside
`net.ipv4.ping_group_range`), or a raw socket (needs CAP_NET_RAW). `icmp_mode`
tries them in that order once per process and remembers the answer; with
neither, every attempt fails saying what to change (docs/systemd.md, "Ping monitors").

Verdict. `count` echoes are sent; the attempt passes when at least one reply
came back and the lost share is at most `max_packet_loss` percent (0: every
echo must be answered). Nothing answered always fails, whatever the allowance.
The response time is the average round trip of the replies, in whole ms.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Callable
from fractions import Fraction
from typing import Literal

from icmplib import Host, async_ping
from icmplib.exceptions import ICMPLibError, SocketPermissionError

from uptime_server.checks.rules import printable
from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.net.guard import (
    GuardedResolver,
    IPAddress,
    TargetNotAllowed,
    address_allowed,
    parse_ip_host,
)
from uptime_server.net.target import parse_host_url

IcmpMode = Literal["unprivileged", "privileged"]
# Opens (and returns) an ICMP socket, raw when the argument is True; raises
# OSError (PermissionError) when the process may not.
SocketOpener = Callable[[bool], socket.socket]

ICMP_NOT_PERMITTED = (
    "ICMP not permitted: allow unprivileged ping (sysctl net.ipv4.ping_group_range) "
    "or grant CAP_NET_RAW (AmbientCapabilities=CAP_NET_RAW in the systemd unit)"
)

# Echoes are spaced like ping(8)'s, but squeezed so all of them and their
# replies fit the attempt's time limit.
_MAX_INTERVAL = 1.0
# Share of the time left after DNS given to the echoes: the rest is slack so a
# host that never answers reports its packet loss, not the attempt's timeout.
_ECHO_BUDGET = 0.9


_MODES_BY_PREFERENCE: tuple[tuple[bool, IcmpMode], ...] = (
    (False, "unprivileged"),
    (True, "privileged"),
)


def open_icmp_socket(privileged: bool) -> socket.socket:
    kind = socket.SOCK_RAW if privileged else socket.SOCK_DGRAM
    return socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP)


@functools.cache
def icmp_mode(open_socket: SocketOpener = open_icmp_socket) -> IcmpMode | None:
    """How this process can ping: "unprivileged", "privileged" (raw), or None.

    Cached: neither the sysctl nor the capabilities change under a running
    daemon often enough to pay a socket per check; restart it after changing them.
    """
    for privileged, mode in _MODES_BY_PREFERENCE:
        try:
            open_socket(privileged).close()
        except OSError:
            continue
        return mode
    return None


async def ping_check(prober: Probing, spec: CheckSpec) -> RunResult:
    """The registry's ping attempt: ``ping://host``, ``count`` (3), ``max_packet_loss`` (0)."""
    opts = spec.options
    try:
        host = parse_host_url(spec.url, "ping")
    except ValueError as exc:  # a stored target this version refuses
        return _failed(f"invalid monitor: url {exc}")
    count = opts.get("count")
    loss = opts.get("max_packet_loss")
    return await ping_attempt(
        host,
        count=3 if count is None else int(count),
        max_packet_loss=0 if loss is None else float(loss),
        timeout=spec.timeout,
        block_private=prober.blocks_private(spec),
    )


async def ping_attempt(
    host: str,
    *,
    count: int = 3,
    max_packet_loss: float = 0,
    timeout: float,
    block_private: bool,
) -> RunResult:
    """One attempt: `count` echoes to *host*, within *timeout* seconds. Never raises."""
    mode = icmp_mode()
    if mode is None:
        return _failed(ICMP_NOT_PERMITTED)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        async with asyncio.timeout(timeout):
            address = await _approved_address(host, block_private=block_private)
            interval, reply_wait = _echo_timing(count, (deadline - loop.time()) * _ECHO_BUDGET)
            result = await async_ping(
                str(address),
                count=count,
                interval=interval,
                timeout=reply_wait,
                privileged=mode == "privileged",
            )
    except TargetNotAllowed as exc:
        return _failed(str(exc))
    except TimeoutError:
        return _failed(f"timeout after {timeout:g}s")
    except SocketPermissionError:
        return _failed(ICMP_NOT_PERMITTED)
    except socket.gaierror:
        return _failed(f"DNS lookup failed: {host}")
    except (ICMPLibError, OSError) as exc:  # the local stack's words, not the peer's
        return _failed(f"ping failed: {exc}")
    except Exception as exc:  # the module edge: every failure becomes a string
        return _failed(f"ping failed: {type(exc).__name__}")
    return judge(result, max_packet_loss=max_packet_loss)


def judge(result: Host, *, max_packet_loss: float) -> RunResult:
    """The verdict on icmplib's summary of the echoes (rules: module docstring)."""
    sent, received = result.packets_sent, result.packets_received
    if not sent:
        # icmplib counts an echo as sent once the kernel took it: none taken
        # means no route to the address.
        return _failed("host unreachable")
    if not received:
        return _failed(f"100% packet loss ({sent} sent)")
    response_time = round(result.avg_rtt)
    loss = Fraction(100 * (sent - received), sent)  # exact: 1 of 3 is over 33.3
    if loss > Fraction(max_packet_loss):
        shown = _percent_over(loss, max_packet_loss)
        error = f"packet loss {shown}% over the allowed {max_packet_loss:g}%"
        return RunResult(False, response_time, None, printable(error))
    return RunResult(True, response_time, None, None)


def _percent_over(loss: Fraction, allowed: float) -> str:
    """*loss* rounded, with just enough decimals to read as more than *allowed*."""
    for decimals in range(3):
        shown = f"{float(loss):.{decimals}f}"
        if float(shown) > allowed:
            return shown
    return f"{float(loss):g}"


async def _approved_address(host: str, *, block_private: bool) -> IPAddress:
    """The one address to ping: *host* if it is one, else its first DNS answer.

    Raises TargetNotAllowed when the guard refuses it (any of the answers, as
    for http) and socket.gaierror when the name does not resolve.
    """
    literal = parse_ip_host(host)
    if literal is not None:
        if not address_allowed(literal, block_private=block_private):
            raise TargetNotAllowed()
        return literal
    resolver = GuardedResolver(block_private=block_private)
    try:
        answers = await resolver.resolve(host, 0, socket.AF_UNSPEC)
    finally:
        await resolver.close()
    # Numeric already (getaddrinfo's answers): icmplib will not look it up again.
    return ipaddress.ip_address(answers[0]["host"])


def _echo_timing(count: int, budget: float) -> tuple[float, float]:
    """(gap between echoes, wait per reply) so that `count` echoes fit *budget* s.

    The gaps take at most half the budget, leaving each reply at least
    budget / (2 * count) to arrive.
    """
    budget = max(budget, 0.001)
    interval = min(_MAX_INTERVAL, budget / (2 * count))
    return interval, (budget - (count - 1) * interval) / count


def _failed(error: str) -> RunResult:
    return RunResult(False, None, None, printable(error))
