"""Alert rendering and delivery transports (no database code).

The outbox table and the delivery loop live elsewhere and build on this API:
render with `build_email` / `slack_payload`, hand the result to a transport,
and schedule a retry with `backoff_delay` on `TemporaryDeliveryError`.
"""

from __future__ import annotations

from uptime_server.notify.message import (
    AlertContent,
    build_email,
    format_duration,
    format_utc,
    make_message_id,
    notification_message,
    redact_text,
    redact_url,
    single_line,
    slack_payload,
    subject,
    text_body,
)
from uptime_server.notify.transports import (
    DeliveryError,
    EmailTransport,
    FileTransport,
    PermanentDeliveryError,
    SlackTransport,
    SmtpSettings,
    SmtpTransport,
    TemporaryDeliveryError,
    backoff_delay,
    email_transport,
)

__all__ = [
    "AlertContent",
    "DeliveryError",
    "EmailTransport",
    "FileTransport",
    "PermanentDeliveryError",
    "SlackTransport",
    "SmtpSettings",
    "SmtpTransport",
    "TemporaryDeliveryError",
    "backoff_delay",
    "build_email",
    "email_transport",
    "format_duration",
    "format_utc",
    "make_message_id",
    "notification_message",
    "redact_text",
    "redact_url",
    "single_line",
    "slack_payload",
    "subject",
    "text_body",
]
