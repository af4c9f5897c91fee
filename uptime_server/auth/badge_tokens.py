"""Badge tokens: the unguessable, read-only capability in a monitor's badge URLs.

A token is 192 random bits (``secrets.token_urlsafe(24)``, 32 characters),
stored as it is under a unique index so a badge request is one index lookup.
It grants reading a monitor's status, uptime and response time, nothing
else, and only while the monitor's ``badges`` flag is on; rotating it makes
every URL holding the old one answer 404 at once (docs/status-pages.md#badges):
``services.monitors.rotate_badge_token`` does it and drops the cached badges.
"""

from __future__ import annotations

import secrets

from uptime_server.models import Monitor

TOKEN_BYTES = 24
# What a token can look like: anything else is refused before the database.
TOKEN_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
TOKEN_LENGTH = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def ensure_token(monitor: Monitor) -> None:
    """Give a monitor with badges on a token if it has none yet (a turned-off one keeps its own)."""
    if monitor.badges and not monitor.badge_token:
        Monitor.update(badge_token=new_token()).where(
            (Monitor.id == monitor.id) & Monitor.badge_token.is_null()
        ).execute()


def monitor_for(token: str) -> Monitor | None:
    """The monitor whose badges *token* opens, or None (unknown, malformed, or badges off)."""
    if len(token) != TOKEN_LENGTH or not TOKEN_ALPHABET.issuperset(token):
        return None
    # Only the columns a badge reads: a full row costs more to build than the query.
    return (
        Monitor.select(Monitor.id, Monitor.team, Monitor.status, Monitor.paused)
        .where((Monitor.badge_token == token) & (Monitor.badges == True))  # noqa: E712
        .first()
    )
