"""``shared_port_sockets`` (``UPTIME_REUSE_PORT``): sockets on one port, bound, not listening.

Loopback only: the sockets are bound and listened on, never connected out.
"""

from __future__ import annotations

import socket

import pytest

from uptime_server.wsgi.server import shared_port_sockets


def _close(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def test_two_sets_bind_the_same_port_and_both_listen() -> None:
    first = shared_port_sockets("127.0.0.1", 0)
    try:
        [one] = first
        port = one.getsockname()[1]
        one.listen()
        second = shared_port_sockets("127.0.0.1", port)
        try:
            [two] = second
            two.listen()
            assert two.getsockname() == ("127.0.0.1", port)
            assert two.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
        finally:
            _close(second)
    finally:
        _close(first)


def test_a_port_held_without_the_option_is_refused() -> None:
    with socket.socket() as plain:
        plain.bind(("127.0.0.1", 0))
        plain.listen()
        port = plain.getsockname()[1]
        with pytest.raises(OSError):
            shared_port_sockets("127.0.0.1", port)


def _ipv6_loopback() -> str | None:
    """Why ::1 cannot be bound here, or None when it can."""
    if not socket.has_ipv6:
        return "no IPv6 in this Python"
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError as exc:
        return f"::1 is not configured here ({exc})"
    return None


def test_an_ipv6_address_gets_a_v6_only_socket() -> None:
    # Skipped only where a plain socket cannot bind ::1; any error of
    # shared_port_sockets itself fails the test.
    missing = _ipv6_loopback()
    if missing:
        pytest.skip(missing)
    sockets = shared_port_sockets("::1", 0)
    try:
        [six] = sockets
        assert six.family == socket.AF_INET6
        assert six.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 1
    finally:
        _close(sockets)
