"""``scheme://host`` targets (ping, dns): what parses and what the host is."""

from __future__ import annotations

import pytest

from uptime_server.net.target import parse_host_url


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("ping://127.0.0.1", "127.0.0.1"),
        ("ping://[::1]", "::1"),
        ("ping://::1", "::1"),
        ("PING://gw.example.test/", "gw.example.test"),
        ("ping://gw.example.test.", "gw.example.test."),
        ("ping://_srv.example", "_srv.example"),
    ],
)
def test_it_gives_the_host(url: str, host: str) -> None:
    assert parse_host_url(url, "ping") == host


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1",
        "dns://127.0.0.1",
        "ping://",
        "ping://host:7",
        "ping://[127.0.0.1]",
        "ping://user@host",
        "ping://host/path",
        "ping://host?q",
        "ping://a b",
        "ping://-bad.example",
    ],
)
def test_it_refuses_anything_else(url: str) -> None:
    with pytest.raises(ValueError, match="must be ping://host"):
        parse_host_url(url, "ping")
