"""``scheme://host`` targets (ping, dns): what parses and what the host is; tcp and udp's
``host:port`` in the URL form."""

from __future__ import annotations

import re

import pytest

from uptime_server.net.target import host_port_url, parse_host_url


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


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("127.0.0.1:5432", "tcp://127.0.0.1:5432"),
        ("db.example.test:22", "tcp://db.example.test:22"),
        ("[::1]:5432", "tcp://[::1]:5432"),
        ("[2001:db8::5]:022", "tcp://[2001:db8::5]:22"),
        ("tcp://127.0.0.1:5432", "tcp://127.0.0.1:5432"),  # a URL is left to its own rule
    ],
)
def test_host_port_becomes_the_url_form(value: str, url: str) -> None:
    assert host_port_url(value, "tcp") == url


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("127.0.0.1", "the port is missing"),
        ("host:", "the port is missing"),
        ("[::1]", "the port is missing"),
        ("host:0", "between 1 and 65535"),
        ("host:65536", "between 1 and 65535"),
        ("host:\u0663", "between 1 and 65535"),
        ("::1:22", "IPv6 address in brackets"),
        ("[127.0.0.1]:22", "only an IPv6 address"),
        (":22", "must be udp://host:port or host:port"),
    ],
)
def test_host_port_without_a_valid_port_is_refused(value: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        host_port_url(value, "udp")
