"""Writing notifications' deliveries into the outbox (same transaction).

The check engine calls ``enqueue`` inside the transaction that changes the
monitor's state, so a notification and its emails/Slack posts exist together
or not at all. The delivery loop sends them later; the check loop never
waits on a mail server.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict
from datetime import datetime
from email.utils import parseaddr
from typing import Any

from uptime_server.clock import isoformat, utc
from uptime_server.models import (
    AlertSettings,
    Channel,
    Membership,
    Monitor,
    Notification,
    Outbox,
    User,
)
from uptime_server.notify.message import AlertContent, subject


def content_for(notification: Notification, monitor: Monitor, **extra: Any) -> AlertContent:
    """The notification's alert content; *extra*: a certificate alert's cert_* fields."""
    return AlertContent(
        kind=notification.type,
        monitor_name=monitor.name,
        monitor_url=monitor.url or "",
        error=notification.error_message or "",
        status_code=notification.error_status_code,
        response_time=notification.error_response_time,
        started_at=notification.started_at,
        resolved_at=notification.resolved_at,
        duration_seconds=notification.duration,
        notification_id=notification.id,
        **extra,
    )


_TIMES = ("started_at", "resolved_at", "cert_not_after")


def content_to_json(content: AlertContent) -> dict[str, Any]:
    data = asdict(content)
    for key in _TIMES:
        data[key] = isoformat(data[key])
    return data


class MalformedPayload(ValueError):
    """A stored outbox payload that cannot become a message; no retry will change that."""


def content_from_json(data: Any) -> AlertContent:
    """The content ``content_to_json`` stored, or MalformedPayload saying what is wrong."""
    if not isinstance(data, dict):
        raise MalformedPayload(f"payload is a {type(data).__name__}, not an object")
    values = dict(data)
    for key in _TIMES:
        if values.get(key) is not None:
            values[key] = _stored_time(values[key], key)
    try:
        return AlertContent(**values)
    except TypeError:
        fields = ", ".join(sorted(values))
        raise MalformedPayload(f"payload fields do not match the alert content: {fields}") from None


def _stored_time(value: Any, key: str) -> datetime:
    # Written by isoformat() above: parsed as such, not as a user's query
    # parameter (whose errors are API errors, which delivery would retry).
    try:
        return utc(datetime.fromisoformat(value))
    except (TypeError, ValueError):
        raise MalformedPayload(f"{key} is not an ISO 8601 time: {str(value)[:64]!r}") from None


_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")


def mail_domain(mail_from: str) -> str:
    """The right-hand side of Message-IDs: the sender's domain.

    Parsed as an address, so a From with a display name
    (``Uptime <uptime@example.com>``) gives ``example.com``, not ``example.com>``,
    which ``build_email`` would refuse as a malformed Message-ID.
    """
    domain = parseaddr(mail_from)[1].rpartition("@")[2]
    return domain if _DOMAIN.fullmatch(domain) else "uptime.local"


def message_id(notification_id: int, channel: str, domain: str) -> str:
    """A new Message-ID for one outbox row; stored with it, so every retry reuses it.

    The random part keeps ids unique across installations and database
    resets: two instances mailing one inbox from the same domain would
    otherwise both send ``uptime-n1-email@...``, and mail systems that drop
    duplicate Message-IDs would swallow the second alert.
    """
    return f"<uptime-n{notification_id}-{channel}-{secrets.token_hex(6)}@{domain}>"


def team_recipients(team_id: int) -> list[str]:
    """Where a monitor's email goes when its alert settings list no one: the
    addresses of its team's members with role member or above (docs/teams.md)."""
    rows = (
        User.select(User.email)
        .join(Membership, on=(Membership.user == User.id))
        .where((Membership.team == team_id) & Membership.role.in_(ALERTED_ROLES))
        .order_by(Membership.id)
        .tuples()
    )
    return list(dict.fromkeys(email for (email,) in rows if email))


ALERTED_ROLES = ("member", "admin", "owner")


def enqueue(
    notification: Notification,
    monitor: Monitor,
    alerts: AlertSettings,
    *,
    default_recipients: list[str],
    mail_domain: str,
    now: datetime,
    content: AlertContent | None = None,
) -> list[Outbox]:
    """Create the outbox rows that *alerts* ask for; return them.

    *content* defaults to ``content_for(notification, monitor)``.
    """
    if notification.type == "recovery" and not alerts.alert_on_recovery:
        return []
    content = content or content_for(notification, monitor)
    payload = content_to_json(content)
    rows = []
    if alerts.email_enabled:
        rows.append(
            Outbox.create(
                notification=notification,
                channel="email",
                recipients=list(alerts.email_recipients or default_recipients),
                subject=subject(content),
                payload=payload,
                message_id=message_id(notification.id, "email", mail_domain),
                next_attempt_at=now,
                created_at=now,
            )
        )
    if alerts.slack_enabled and alerts.slack_webhook_url:
        rows.append(
            Outbox.create(
                notification=notification,
                channel="slack",
                target=alerts.slack_webhook_url,
                subject=subject(content),
                payload=payload,
                message_id=message_id(notification.id, "slack", mail_domain),
                next_attempt_at=now,
                created_at=now,
            )
        )
    for channel in channels_of(monitor, alerts.channel_ids or []):
        rows.append(
            _channel_row(notification, channel, payload, subject(content), mail_domain, now)
        )
    return rows


def channels_of(monitor: Monitor, channel_ids: list[int]) -> list[Channel]:
    """The monitor owner's channels among *channel_ids* (another user's never), by id."""
    if not channel_ids:
        return []
    return list(
        Channel.select()
        .where(Channel.id.in_(channel_ids) & (Channel.team == monitor.team_id))
        .order_by(Channel.id)
    )


def _channel_row(
    notification: Notification,
    channel: Channel,
    payload: dict[str, Any],
    title: str,
    mail_domain: str,
    now: datetime,
    *,
    event: str = "alert",
) -> Outbox:
    tag = f"c{channel.id}" if event == "alert" else f"c{channel.id}-{event[:3]}"
    return Outbox.create(
        notification=notification,
        channel=channel.type,
        channel_id=channel.id,
        event=event,
        subject=title,
        payload=payload,
        message_id=message_id(notification.id, tag, mail_domain),
        next_attempt_at=now,
        created_at=now,
    )


def enqueue_acknowledgement(
    notification: Notification, monitor: Monitor, *, mail_domain: str, now: datetime
) -> list[Outbox]:
    """An ``acknowledge`` row for each PagerDuty channel of the monitor (docs/channels.md)."""
    alerts = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id)
    channels = [
        c
        for c in channels_of(monitor, alerts.channel_ids if alerts else [])
        if c.type == "pagerduty"
    ]
    if not channels:
        return []
    content = content_for(notification, monitor)
    payload = content_to_json(content)
    return [
        _channel_row(
            notification, c, payload, subject(content), mail_domain, now, event="acknowledge"
        )
        for c in channels
    ]
