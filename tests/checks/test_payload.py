"""The escape syntax of tcp/udp payloads (checks/payload.py)."""

from __future__ import annotations

import pytest

from uptime_server.checks.payload import EscapeError, parse_escapes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", b""),
        ("PING", b"PING"),
        (r"a\nb", b"a\nb"),
        (r"\r\n", b"\r\n"),
        (r"\t", b"\t"),
        (r"\\", b"\\"),
        (r"\0", b"\x00"),
        (r"\x00\x7f\xFF\xab", b"\x00\x7f\xff\xab"),
        # \\n is a backslash then an n, not a newline.
        (r"\\n", b"\\n"),
        (r"\x410", b"A0"),  # exactly two hex digits
        ("é\n", "é\n".encode()),  # real characters go as UTF-8, real controls as they are
        (r"\xc3\xa9", "é".encode()),
        (r"GET / HTTP/1.0\r\n\r\n", b"GET / HTTP/1.0\r\n\r\n"),
    ],
)
def test_it_replaces_escapes(text: str, expected: bytes) -> None:
    assert parse_escapes(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc\\", "ends with a lone backslash"),
        (r"\q", r"unknown escape \q"),
        (r"\u00e9", r"unknown escape \u"),
        (r"\x4", r"\x needs two hex digits"),
        (r"\xg0", r"\x needs two hex digits"),
        ("\ud800", "not valid Unicode text"),
    ],
)
def test_it_refuses_bad_escapes_saying_which(text: str, message: str) -> None:
    with pytest.raises(EscapeError) as caught:
        parse_escapes(text)
    assert message in str(caught.value)


def test_an_escape_error_is_a_value_error() -> None:
    # Validation code catches ValueError for a field's bad value.
    with pytest.raises(ValueError):
        parse_escapes(r"\z")
