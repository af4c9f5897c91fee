"""Webhook bodies: the default JSON document, or the user's template filled in.

A template is text with placeholders such as ``{monitor.name}``; each has a
JSON form, ``{monitor.name|json}``, which is the value as a JSON literal
(quoted and escaped string, bare number, ``null`` for none), so a template
that builds JSON stays valid whatever the monitor's name or error holds.
Braces that are not a known placeholder are left alone: a JSON template needs
no escaping. The list is in docs/channels.md#placeholders.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from uptime_server.clock import isoformat
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.message import (
    format_duration,
    notification_message,
    redact_text,
    redact_url,
)

PLACEHOLDERS: dict[str, Callable[[ChannelMessage], Any]] = {
    "monitor.name": lambda m: m.content.monitor_name,
    "monitor.url": lambda m: redact_url(m.content.monitor_url),
    "status": lambda m: m.status,
    "kind": lambda m: m.content.kind,
    "error": lambda m: redact_text(m.content.error),
    "status_code": lambda m: m.content.status_code,
    "response_time": lambda m: m.content.response_time,
    "started_at": lambda m: isoformat(m.content.started_at),
    "resolved_at": lambda m: isoformat(m.content.resolved_at) if m.content.resolved_at else None,
    "duration": lambda m: m.content.duration_seconds,
    "message": lambda m: summary(m),
    "notification.id": lambda m: m.content.notification_id,
}
_PLACEHOLDER = re.compile(
    r"\{(" + "|".join(re.escape(name) for name in PLACEHOLDERS) + r")(\|json)?\}"
)


def summary(message: ChannelMessage) -> str:
    """One line: the in-app message of the notification."""
    c = message.content
    if message.test:
        return "Test message from Uptime: this channel works."
    if message.event == "acknowledge":
        return f"{c.monitor_name} is DOWN (acknowledged)"
    try:
        return notification_message(
            c.kind, c.monitor_name, redact_text(c.error), c.duration_seconds
        )
    except ValueError:  # a kind this module does not word: say what it is
        return f"{c.monitor_name}: {c.kind}" + (f": {redact_text(c.error)}" if c.error else "")


def render(template: str, message: ChannelMessage) -> str:
    """*template* with every known placeholder replaced."""

    def fill(match: re.Match[str]) -> str:
        value = PLACEHOLDERS[match.group(1)](message)
        if match.group(2):
            return json.dumps(value)
        return "" if value is None else str(value)

    return _PLACEHOLDER.sub(fill, template)


def default_body(message: ChannelMessage) -> dict[str, Any]:
    """The JSON document sent when the channel has no template for this message."""
    return {
        "event": message.event,
        "status": message.status,
        "kind": message.content.kind,
        "test": message.test,
        "message": summary(message),
        "monitor": {
            "name": message.content.monitor_name,
            "url": redact_url(message.content.monitor_url),
        },
        "error": redact_text(message.content.error),
        "status_code": message.content.status_code,
        "response_time": message.content.response_time,
        "started_at": PLACEHOLDERS["started_at"](message),
        "resolved_at": PLACEHOLDERS["resolved_at"](message),
        "duration": message.content.duration_seconds,
        "notification_id": message.content.notification_id,
        # A parent's DOWN: {"down": [names], "more": n}; its UP: {"still_down": n}.
        "blocked": message.content.effects_json(),
    }


def webhook_body(config: dict[str, Any], message: ChannelMessage) -> tuple[bytes, bool]:
    """(the body, whether it is the default JSON document) for a webhook channel."""
    template = config.get("body_up") if message.is_recovery else config.get("body_down")
    if template:
        return render(template, message).encode(), False
    return json.dumps(default_body(message), separators=(",", ":")).encode(), True


def plain_text(message: ChannelMessage) -> str:
    """A short plain-text rendering for chat services (Apprise)."""
    c = message.content
    lines = [summary(message), ""]
    if c.monitor_url:
        lines.append(f"URL: {redact_url(c.monitor_url)}")
    if c.error:
        lines.append(f"Error: {redact_text(c.error)}")
    lines.append(f"Started at: {isoformat(c.started_at)}")
    if c.resolved_at is not None:
        lines.append(f"Resolved at: {isoformat(c.resolved_at)}")
    if c.duration_seconds is not None:
        lines.append(f"Duration: {format_duration(c.duration_seconds)}")
    if effects := c.effects_lines():
        lines += ["", *effects]
    return "\n".join(lines)
