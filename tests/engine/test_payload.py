"""parse_escapes: what a tcp/udp monitor's `send` text stands for."""

from __future__ import annotations

import pytest

from uptime_server.engine.probes.payload import parse_escapes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PING\\r\\n", b"PING\r\n"),
        ("a\\tb", b"a\tb"),
        ("\\0\\x00\\xff\\xAB", b"\0\0\xff\xab"),
        ("back\\\\slash", b"back\\slash"),
        ("é", "é".encode()),
        ("", b""),
        ("no escapes", b"no escapes"),
    ],
)
def test_escapes_become_bytes(text: str, expected: bytes) -> None:
    assert parse_escapes(text) == expected


@pytest.mark.parametrize("text", ["\\q", "ab\\", "\\x4", "x\\xZZ", "\\n\\u0041"])
def test_a_bad_escape_is_refused(text: str) -> None:
    # Refused, never sent as something the user did not mean (validation
    # words the error; the run of a stored one fails).
    with pytest.raises(ValueError, match="escape|backslash"):
        parse_escapes(text)
