"""What a tcp/udp monitor sends, typed as text with escapes.

``parse_escapes`` turns the stored ``send`` text into bytes: ``\\n``, ``\\r``,
``\\t``, ``\\0``, ``\\\\`` and ``\\xHH`` are escapes; every other character is
sent as its UTF-8 bytes. A backslash before anything else is an error, so a
typo never sends something the user did not mean (validation rejects it).
"""

from __future__ import annotations

_SIMPLE = {"n": b"\n", "r": b"\r", "t": b"\t", "0": b"\0", "\\": b"\\"}
_HEX = frozenset("0123456789abcdefABCDEF")


def parse_escapes(text: str) -> bytes:
    """The bytes *text* stands for; ValueError names the first bad escape."""
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out += char.encode()
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code in _SIMPLE:
            out += _SIMPLE[code]
            i += 2
        elif code == "x" and len(text) >= i + 4 and set(text[i + 2 : i + 4]) <= _HEX:
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        else:
            raise ValueError(
                f"invalid escape at character {i + 1}: use \\n, \\r, \\t, \\0, \\\\ or \\xHH"
            )
    return bytes(out)
