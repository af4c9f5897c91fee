"""Pass rules of one attempt and the error strings a failed attempt carries.

Pure functions: no I/O, so the wording of every error is testable on its own.
An error never quotes what the target sent (body, header values, a parser's
view of a malformed response): a monitor must not become a way to read a
service one error at a time. Status codes are fine. The JSONPath rule lives in
``json_path`` (it runs off the event loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uptime_server.net.errors import KnownFailure
from uptime_server.printable import printable as printable  # the probes' import of it

if TYPE_CHECKING:
    from uptime_server.checks.types import CheckSpec

# Errors are stored and mailed; a 1 KiB expected_content must not make them huge.
_QUOTE_LIMIT = 100
# The longest error stored from a run the server did not make itself (a probe
# agent's result): its probes make short ones, but the agent API takes text.
ERROR_LIMIT = 1000


class ProbeFailure(KnownFailure):
    """A failed attempt whose message is already the human error string."""


def evaluate(spec: CheckSpec, status: int, body: bytes, charset: str | None) -> str | None:
    """The first of pass rules 2-4 the response breaks, as an error; None if it passes.

    The rules: docs/api.md#what-one-check-does. Rule 5, the JSONPath, is
    `json_path.JsonPathRunner`'s.
    """
    if status not in spec.expected_status:
        codes = ", ".join(str(code) for code in spec.expected_status)
        return f"expected status in [{codes}], got {status}"
    if spec.expected_content or spec.excluded_content:
        text = _decode(body, charset)
        if spec.expected_content and spec.expected_content not in text:
            return f'expected content "{shorten(spec.expected_content)}" not found'
        if spec.excluded_content and spec.excluded_content in text:
            return f'excluded content "{shorten(spec.excluded_content)}" found'
    return None


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def shorten(text: str) -> str:
    return text if len(text) <= _QUOTE_LIMIT else text[: _QUOTE_LIMIT - 1] + "…"


def stored_error(error: str | None) -> str | None:
    """*error* as a run made elsewhere is stored: ``printable``, at most ERROR_LIMIT characters."""
    text = printable(error)
    if text is None or len(text) <= ERROR_LIMIT:
        return text
    return text[: ERROR_LIMIT - 1] + "…"
