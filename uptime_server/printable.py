"""Text from outside as it may be stored and shown: no control characters.

A peer's error, a ping's body, a monitor's name written to the database by
hand: such text ends up in terminals, logs, emails and chat services, and an
ESC in it must not drive them.
"""

from __future__ import annotations


def printable(text: str | None) -> str | None:
    """*text* without C0/C1 control characters, DEL included.

    Whitespace controls become a space, so words stay apart; the rest go.
    """
    return None if text is None else text.translate(_CONTROLS)


# C0, DEL and C1: whitespace controls become a space, the others are dropped.
_CONTROLS = {
    code: " " if chr(code) in "\t\n\v\f\r" else None for code in (*range(0x20), *range(0x7F, 0xA0))
}
