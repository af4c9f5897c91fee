"""Alert content and its renderings: in-app message, email, Slack payload.

Everything here is pure (no I/O, no clock): the same `AlertContent` always
renders to the same bytes, so an email retried after a restart is identical to
the first attempt, Message-ID and Date included.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

AlertKind = Literal[
    "downtime", "recovery", "cert_expiry", "reminder", "flapping", "flapping_settled"
]
ALERT_KINDS: tuple[str, ...] = AlertKind.__args__  # type: ignore[attr-defined]

REDACTED = "***"

# Slack treats these three as markup ("<!channel>" pings everyone), so a monitor
# name or error must not be able to smuggle them in unescaped.
_SLACK_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))

# scheme://userinfo@ inside free text, e.g. an error message quoting the URL.
_USERINFO_IN_TEXT = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]*@")

# What a Message-ID may contain once the caller has built it: no spaces, no
# control characters, no angle brackets inside, exactly one "@".
_MESSAGE_ID = re.compile(r"<[!-;=?-~]+@[!-;=?-~]+>")


@dataclass(frozen=True)
class AlertContent:
    """What one alert says, independent of the channel that carries it."""

    kind: AlertKind
    monitor_name: str
    monitor_url: str
    error: str
    status_code: int | None
    response_time: int | None  # milliseconds
    started_at: datetime
    resolved_at: datetime | None
    duration_seconds: int | None
    notification_id: int
    # cert_expiry only: the certificate and the days left when it was alerted.
    cert_not_after: datetime | None = None
    cert_serial: str | None = None
    cert_days_left: int | None = None
    cert_threshold: int | None = None
    # A parent's downtime: the names of the monitors it blocks that are down
    # when it is written (up to 50, then how many more). Its recovery: how
    # many of them are still down (None: it blocks no monitor).
    blocked_down: tuple[str, ...] = ()
    blocked_more: int = 0
    blocked_still_down: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ALERT_KINDS:
            raise ValueError(f"unknown alert kind: {self.kind!r}")
        if not isinstance(self.blocked_down, tuple):  # read back from JSON as a list
            object.__setattr__(self, "blocked_down", tuple(self.blocked_down))

    @property
    def blocked_total(self) -> int:
        return len(self.blocked_down) + self.blocked_more

    def effects_lines(self) -> list[str]:
        """The lines that name this alert's effects (docs/alerts.md#dependencies); [] if none."""
        if self.blocked_down:
            lines = [f"Blocking {self.blocked_total} monitor(s) that are down:"]
            lines += [f"- {single_line(name)}" for name in self.blocked_down]
            if self.blocked_more:
                lines.append(f"and {self.blocked_more} more")
            return lines
        if self.blocked_still_down is not None:
            return [f"Monitors it blocks still down: {self.blocked_still_down}"]
        return []

    def effects_json(self) -> dict[str, object] | None:
        """The same for JSON bodies: None when it names no effect."""
        if self.blocked_down:
            return {"down": list(self.blocked_down), "more": self.blocked_more}
        if self.blocked_still_down is not None:
            return {"still_down": self.blocked_still_down}
        return None

    @property
    def state(self) -> str:
        """What the message says the monitor is: DOWN, UP or FLAPPING.

        A ``flapping_settled`` message carries the last error when it settled
        DOWN and none when UP (as a recovery does).
        """
        if self.kind == "flapping":
            return "FLAPPING"
        if self.kind == "recovery" or (self.kind == "flapping_settled" and not self.error):
            return "UP"
        return "DOWN"

    @property
    def event_time(self) -> datetime:
        """When the thing being reported happened (recovery time, else start)."""
        return self.resolved_at or self.started_at


# --- small text helpers ----------------------------------------------------


def redact_url(url: str) -> str:
    """Replace `user:password@` in a URL with `***:***@` (`***@` for a bare user).

    Anything that does not parse as a URL is still scrubbed of anything that
    looks like userinfo, because this runs on the way into logs and emails.
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unbalanced IPv6 bracket
        return _USERINFO_IN_TEXT.sub(rf"\1{REDACTED}@", url)
    if "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    masked = f"{REDACTED}:{REDACTED}" if ":" in userinfo else REDACTED
    return urlunsplit(parts._replace(netloc=f"{masked}@{hostport}"))


def redact_text(text: str) -> str:
    """Redact userinfo in every URL found inside free text (e.g. an error)."""
    return _USERINFO_IN_TEXT.sub(rf"\1{REDACTED}@", text)


def single_line(text: str) -> str:
    """Collapse control characters and line breaks into single spaces.

    Covers every character `str.splitlines` or a mail parser could treat as a
    line break (CR, LF, VT, FF, FS/GS/RS, NEL, U+2028, U+2029), so the result can
    go into a header or a one-line field without starting a new line.
    """
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text)
    return " ".join(cleaned.split())


def format_duration(seconds: float | None) -> str:
    """Human duration with the two most significant units: `4m 12s`, `1d 2h`."""
    if seconds is None:
        return "an unknown time"
    remaining = max(0, int(seconds))
    units = []
    for suffix, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        value, remaining = divmod(remaining, size)
        units.append((value, suffix))
    # Start at the first non-zero unit; keep the next one unless it is zero.
    first = next((i for i, (value, _) in enumerate(units) if value), len(units) - 1)
    shown = [units[first]]
    if first + 1 < len(units) and units[first + 1][0]:
        shown.append(units[first + 1])
    return " ".join(f"{value}{suffix}" for value, suffix in shown)


def format_utc(moment: datetime | None) -> str:
    """ISO 8601 in UTC with a `Z`, to the second; naive datetimes count as UTC."""
    if moment is None:
        return "-"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- renderings ---------------------------------------------------------------


def cert_message(name: str, threshold: int | None, days_left: int | None) -> str:
    """The in-app message (and email subject, less the tag) of a certificate alert.

    Named by the threshold crossed (``expires in 7 days`` for the 7-day
    alert, whether 7 or 6.5 days are left); ``has expired`` once it has.
    """
    if days_left is not None and days_left <= 0:
        return f"Certificate for {name} has expired"
    if threshold is None:
        return f"Certificate for {name} expires soon"
    return f"Certificate for {name} expires in {threshold} day{'' if threshold == 1 else 's'}"


def notification_message(
    kind: AlertKind, name: str, error: str, duration_seconds: int | None
) -> str:
    """The in-app `message` of a downtime or recovery (docs/api.md#notification-object)."""
    if kind == "downtime":
        return f"{name} is DOWN: {error}" if error else f"{name} is DOWN"
    if kind == "recovery":
        if duration_seconds is None:
            return f"{name} is UP again"
        return f"{name} is UP again after {format_duration(duration_seconds)}"
    if kind == "reminder":
        still = f"{name} is still DOWN after {format_duration(duration_seconds)}"
        return f"{still}: {error}" if error else still
    if kind == "flapping":
        return f"{name} is flapping: alerts are held until it settles"
    if kind == "flapping_settled":
        settled = f"{name} stopped flapping and is {'DOWN' if error else 'UP'}"
        return f"{settled}: {error}" if error else settled
    raise ValueError(f"unknown alert kind: {kind!r}")


def subject(content: AlertContent) -> str:
    """`[Uptime] DOWN: <name>` / `[Uptime] UP: <name>`, always one line.

    Reminders say `STILL DOWN`, flapping `FLAPPING` and its end `SETTLED UP`
    or `SETTLED DOWN`. A certificate alert: `[Uptime] Certificate for <name>
    expires in 7 days`.
    """
    if content.kind == "cert_expiry":
        return f"[Uptime] {_summary(content)}"
    state = content.state
    if content.kind == "reminder":
        state = "STILL DOWN"
    elif content.kind == "flapping_settled":
        state = f"SETTLED {state}"
    return f"[Uptime] {state}: {single_line(content.monitor_name)}"


def _summary(content: AlertContent) -> str:
    if content.kind == "cert_expiry":
        return cert_message(
            single_line(content.monitor_name), content.cert_threshold, content.cert_days_left
        )
    return notification_message(
        content.kind,
        single_line(content.monitor_name),
        single_line(redact_text(content.error)),
        content.duration_seconds,
    )


def _optional(value: int | None, unit: str = "") -> str:
    return "-" if value is None else f"{value}{unit}"


def text_body(content: AlertContent) -> str:
    """Plain-text body shared by email and Slack.

    Every field is flattened to one line so a name or error cannot forge extra
    lines that look like other fields.
    """
    if content.kind == "cert_expiry":
        return _lines(content, _cert_fields(content))
    error = single_line(redact_text(content.error)) or "none"
    fields = [
        ("Monitor", single_line(content.monitor_name)),
        ("URL", single_line(redact_url(content.monitor_url))),
        ("Status", content.state),
        ("Error", error),
        ("Status code", _optional(content.status_code)),
        ("Response time", _optional(content.response_time, " ms")),
        ("Started at", format_utc(content.started_at)),
    ]
    if content.kind == "recovery":
        fields.append(("Resolved at", format_utc(content.resolved_at)))
        fields.append(("Downtime", _downtime(content.duration_seconds)))
    elif content.kind == "reminder":
        fields.append(("Down for", _downtime(content.duration_seconds)))
    elif content.kind == "flapping_settled":
        fields.append(("Settled at", format_utc(content.resolved_at)))
        fields.append(("Flapped for", _downtime(content.duration_seconds)))
    return _lines(content, fields)


def _cert_fields(content: AlertContent) -> list[tuple[str, str]]:
    return [
        ("Monitor", single_line(content.monitor_name)),
        ("URL", single_line(redact_url(content.monitor_url))),
        ("Host", single_line(_host(content.monitor_url))),
        ("Not after", format_utc(content.cert_not_after)),
        ("Serial", single_line(content.cert_serial or "-")),
        ("Days left", _optional(content.cert_days_left)),
        ("Threshold", _optional(content.cert_threshold, " days")),
        ("Seen at", format_utc(content.started_at)),
    ]


def _host(url: str) -> str:
    try:
        return urlsplit(url).hostname or "-"
    except ValueError:
        return "-"


def _lines(content: AlertContent, fields: list[tuple[str, str]]) -> str:
    fields = [*fields, ("Notification", f"#{content.notification_id}")]
    width = max(len(label) for label, _ in fields) + 2
    lines = [_summary(content), ""]
    lines += [f"{label + ':':<{width}}{value}" for label, value in fields]
    if effects := content.effects_lines():
        lines += ["", *effects]
    lines += ["", "-- ", "Sent by Uptime. Times are UTC."]
    return "\n".join(lines) + "\n"


def _downtime(seconds: int | None) -> str:
    if seconds is None:
        return "unknown"
    return f"{format_duration(seconds)} ({int(seconds)} s)"


def build_email(
    content: AlertContent,
    *,
    sender: str,
    recipients: list[str],
    message_id: str,
    date: datetime | None = None,
) -> EmailMessage:
    """Compose the alert email.

    `date` defaults to the event time rather than "now", so the message is a
    pure function of its inputs and a retry produces the same bytes.
    """
    msg = envelope(sender=sender, recipients=recipients, message_id=message_id)
    when = date or content.event_time
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    msg["Subject"] = subject(content)
    msg["Date"] = format_datetime(when.astimezone(UTC))
    msg["Message-ID"] = message_id
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation auto-replies
    body = text_body(content)
    # Quoted-printable keeps the wire 7-bit for servers without 8BITMIME.
    msg.set_content(body, cte="7bit" if body.isascii() else "quoted-printable")
    return msg


def envelope(*, sender: str, recipients: list[str], message_id: str) -> EmailMessage:
    """A new message with From and To, once the addresses and *message_id* are checked.

    Every email of ours starts here (alerts, invitations), so a value that
    would become several header lines or addresses never gets in.
    """
    _check_address_list([sender], "sender")
    _check_address_list(recipients, "recipients")
    if not _MESSAGE_ID.fullmatch(message_id):
        raise ValueError(f"malformed Message-ID: {message_id!r}")
    msg = EmailMessage(policy=policy.SMTP)
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    return msg


def _check_address_list(addresses: list[str], what: str) -> None:
    # Addresses come from validated settings; this is the last line of defence
    # against one value turning into several header lines or several addresses.
    if not addresses:
        raise ValueError(f"{what}: at least one address is required")
    for address in addresses:
        if not address or single_line(address) != address or any(c in address for c in ",;"):
            raise ValueError(f"{what}: not a single address: {address!r}")


def slack_text(content: AlertContent) -> str:
    """The email's text, escaped for Slack's markup."""
    text = text_body(content)
    for raw, escaped in _SLACK_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def slack_payload(content: AlertContent) -> dict[str, str]:
    """Body for a Slack incoming webhook: `{"text": ...}`."""
    return {"text": slack_text(content)}
