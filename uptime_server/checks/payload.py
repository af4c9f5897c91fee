"""What a tcp or udp monitor sends: the user's text with escapes, as bytes.

A payload is typed into a form or a JSON string, where raw control bytes are
awkward, so a few backslash escapes stand for them: ``\\n``, ``\\r``, ``\\t``,
``\\\\``, ``\\0`` (NUL) and ``\\xHH`` (one byte, two hex digits). Everything
else is sent as its UTF-8 encoding, so ``\\xHH`` is the way to send a byte
above 0x7F that is not part of a UTF-8 character.
"""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|.|$)", re.DOTALL)
_SIMPLE = {"n": b"\n", "r": b"\r", "t": b"\t", "\\": b"\\", "0": b"\0"}


class EscapeError(ValueError):
    """The text has an escape this syntax does not know; the message says which."""


def parse_escapes(text: str) -> bytes:
    """*text* with its escapes replaced, as bytes; raises EscapeError on a bad escape."""
    out = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(text):
        out += _utf8(text[pos : match.start()])
        out += _escaped(match.group(1))
        pos = match.end()
    out += _utf8(text[pos:])
    return bytes(out)


def _escaped(code: str) -> bytes:
    if len(code) == 3:  # the pattern only lets a complete \xHH be this long
        return bytes((int(code[1:], 16),))
    if code in _SIMPLE:
        return _SIMPLE[code]
    if code == "":
        raise EscapeError("ends with a lone backslash (write \\\\ for a backslash)")
    if code == "x":
        raise EscapeError("\\x needs two hex digits, as in \\x0a")
    raise EscapeError(f"unknown escape \\{code} (known: \\n \\r \\t \\\\ \\0 \\xHH)")


def _utf8(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError as exc:  # a lone surrogate, which JSON can carry
        raise EscapeError("not valid Unicode text") from exc
