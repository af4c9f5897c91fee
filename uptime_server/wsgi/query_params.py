"""Query-string parameters → typed values, or a VALIDATION_ERROR naming the parameter.

An empty parameter counts as absent; bounds and allowed values are given by
the view that reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from uptime_server.db import INT64_MAX
from uptime_server.errors import ApiError, validation_error

_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")  # ASCII digits; longer is no number anyone meant


def int_param(args: Mapping[str, str], name: str, default: int, lo: int, hi: int | None) -> int:
    """*name* as an integer in [lo, hi]; never above INT64_MAX, which the databases bind."""
    raw = args.get(name)
    if raw is None or raw == "":
        return default
    if not _INTEGER.fullmatch(raw):
        raise validation_error({name: ["must be an integer"]})
    value = int(raw)
    hi = INT64_MAX if hi is None else min(hi, INT64_MAX)
    if not lo <= value <= hi:
        raise validation_error({name: [f"must be between {lo} and {hi}"]})
    return value


def choice_param(
    args: Mapping[str, str], name: str, allowed: tuple[str, ...], default: str | None = None
) -> str | None:
    raw = args.get(name)
    if raw is None or raw == "":
        return default
    if raw not in allowed:
        raise validation_error({name: [f"must be one of {', '.join(allowed)}"]})
    return raw


def time_param(args: Mapping[str, str], name: str) -> datetime | None:
    raw = args.get(name)
    if raw is None or raw == "":
        return None
    return parse_time(raw, name)


def parse_time(raw: str, name: str) -> datetime:
    try:
        value = datetime.fromisoformat(raw.strip().replace(" ", "+") if "T" in raw else raw.strip())
    except ValueError:
        raise validation_error(
            {name: ["must be an ISO 8601 time, e.g. 2026-01-31T12:00:00Z"]}
        ) from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-01:00 is in the year 10000 in UTC
        raise validation_error(
            {name: ["must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z"]}
        ) from None


_DURATION = re.compile(r"([0-9]{1,6})([dhm])")
_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def since_param(args: Mapping[str, str], name: str, now: datetime) -> datetime | None:
    """*name* as an ISO 8601 time, or a duration back from *now*: ``7d``, ``12h``, ``30m``."""
    raw = (args.get(name) or "").strip()
    if not raw:
        return None
    if match := _DURATION.fullmatch(raw):
        try:
            return now - timedelta(**{_UNITS[match[2]]: int(match[1])})
        except OverflowError:
            raise validation_error({name: ["reaches back before the year 1"]}) from None
    try:
        return parse_time(raw, name)
    except ApiError:
        raise validation_error(
            {name: ["must be an ISO 8601 time (2026-01-31T12:00:00Z) or a duration: 7d, 12h, 30m"]}
        ) from None
