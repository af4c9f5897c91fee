"""The rules of single request fields: URLs, methods, headers, bodies, addresses.

Each constraint is declared once, so it both validates and documents
(``schemas.requests.Checked`` and ``Rule``). The models that use them are in
``schemas.monitor_config``; rules and defaults: docs/api.md#monitor-fields.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from urllib.parse import urlsplit

from uptime_server.email_syntax import MAX_ADDRESS, normalize_email
from uptime_server.net import guard
from uptime_server.schemas.requests import Checked, Rule

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
MAX_URL = 2048
MAX_MONITOR_BODY = 64 * 1024
MAX_CHECK_INTERVAL = 86400
MAX_HEADERS = 50
MAX_HEADER_VALUE = 8192
_HEADER_VALUE = re.compile(r"^[^\r\n\u0000]*$")
# The check frames its own request: a monitor's header could contradict the
# body length or the target (request smuggling, a second Host) or break the
# connection handling.
FRAMING_HEADERS = ("Host", "Content-Length", "Transfer-Encoding", "Connection")
# Case-insensitive match for the OpenAPI document (ECMA regexes have no (?i)).
METHOD_PATTERN = "^({})$".format(
    "|".join("".join(f"[{ch}{ch.lower()}]" for ch in method) for method in METHODS)
)


def no_control(value: str, field: str) -> str:
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise ValueError(f"{field} must not contain control characters")
    return value


def no_nul(value: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL, so SQLite must refuse it too.
    if value is not None and "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def check_http_url(value: str, *, require_https: bool = False) -> str:
    if len(value) > MAX_URL:
        raise ValueError(f"must be at most {MAX_URL} characters")
    if value != value.strip() or any(ch.isspace() for ch in value):
        raise ValueError("must not contain whitespace")
    no_control(value, "url")
    try:
        parts = urlsplit(value)
        _ = parts.port  # reading it raises ValueError on a bad port
    except ValueError:
        raise ValueError("is not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("must be an absolute http or https URL")
    if not parts.hostname:
        raise ValueError("must have a host")
    if require_https and parts.scheme != "https":
        raise ValueError("must use https for a monitor of type https")
    return value


_NEVER_ALLOWED = (
    "has an IP address checks may never connect to "
    "(link-local such as cloud metadata, unspecified, multicast or reserved)"
)
_PRIVATE_BLOCKED = (
    "has a private, loopback or other non-public IP address, "
    "which this server refuses (UPTIME_BLOCK_PRIVATE_TARGETS)"
)


def check_target_literal(url: str, *, block_private: bool) -> None:
    """Refuse, up front, an IP-literal host the SSRF guard would refuse at run time.

    The verdict is the guard's own (docs/api.md#outbound-safety). Host names
    pass: only what DNS answers when the check runs can be judged.
    """
    if not _guard_allows(url, block_private=False):
        raise ValueError(_NEVER_ALLOWED)
    if block_private and not _guard_allows(url, block_private=True):
        raise ValueError(_PRIVATE_BLOCKED)


def check_target_host(host: str, *, block_private: bool) -> None:
    """As ``check_target_literal``, for the host of a tcp/udp target or a resolver."""
    addr = guard.parse_ip_host(host)
    if addr is None:
        return
    if not guard.address_allowed(addr, block_private=False):
        raise ValueError(_NEVER_ALLOWED)
    if block_private and not guard.address_allowed(addr, block_private=True):
        raise ValueError(_PRIVATE_BLOCKED)


def _guard_allows(url: str, *, block_private: bool) -> bool:
    try:
        guard.check_url(url, block_private=block_private)
    except guard.TargetNotAllowed:
        return False
    except ValueError:
        raise ValueError("is not a valid URL") from None
    return True


def strip(value: Any) -> Any:
    # Before the length rule, which counts what is stored; a non-string is
    # left to the strict type check.
    return value.strip() if isinstance(value, str) else value


def dedupe(value: Any) -> Any:
    # Repeats count once, in the length rule too (a non-list of strings is
    # left to the strict type check).
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(dict.fromkeys(value))
    return value


def utf8_at_most(limit: int) -> Checked:
    """At most *limit* bytes of UTF-8, shown as maxLength (a character is at least a byte)."""

    def check(value: str) -> str:
        if len(value.encode()) > limit:
            raise ValueError(f"must be at most {limit // 1024} KiB")
        return value

    return Checked(check, {"maxLength": limit})


def header_syntax() -> Checked:
    """Header names are RFC 7230 tokens; values hold no CR, LF or NUL and are bounded."""

    def check(headers: dict[str, str]) -> dict[str, str]:
        for key, value in headers.items():
            if not _TOKEN.match(key):
                raise ValueError(f"header name {key[:40]!r} is not a valid token")
            if not _HEADER_VALUE.match(value) or len(value) > MAX_HEADER_VALUE:
                raise ValueError(
                    f"header {key} has CR, LF or NUL, or is over {MAX_HEADER_VALUE} characters"
                )
        return headers

    value_schema = {
        "type": "string",
        "maxLength": MAX_HEADER_VALUE,
        "pattern": _HEADER_VALUE.pattern,
    }
    return Checked(
        check, {"propertyNames": {"pattern": _TOKEN.pattern}, "additionalProperties": value_schema}
    )


def email_addresses() -> Checked:
    """Each address by its syntax alone (email_syntax), every bad one named in one message."""

    def check(value: list[str]) -> list[str]:
        addresses: list[str] = []
        bad: list[str] = []
        for address in value:
            try:
                addresses.append(normalize_email(address))
            except ValueError as exc:
                bad.append(f"{address[:100]!r} {exc}")
        if bad:
            raise ValueError("; ".join(bad))
        return list(dict.fromkeys(addresses))

    return Checked(
        check, {"items": {"type": "string", "format": "email", "maxLength": MAX_ADDRESS}}
    )


def https_url() -> Checked:
    """An absolute https URL (``check_http_url``), shown as its scheme's pattern; empty is none."""

    def check(value: str) -> str | None:
        return check_http_url(value, require_https=True) if value else None

    return Checked(check, {"pattern": "^https://"})


URL_TOO_LONG = Rule(f"must be at most {MAX_URL} characters", on=("string_too_long",))
