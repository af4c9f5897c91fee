"""The transports a daemon's settings ask for.

``UPTIME_SMTP_*`` become ``SmtpSettings`` (or the file outbox without a host).
A Slack webhook is user input like a monitor URL: its transport connects
through the same guard, under ``UPTIME_BLOCK_PRIVATE_TARGETS``, and trusts
``UPTIME_CA_BUNDLE`` like the probes do.
"""

from __future__ import annotations

import ssl
from email.utils import parseaddr

from uptime_server.config import Settings
from uptime_server.notify.transports import (
    EmailTransport,
    SlackTransport,
    SmtpSettings,
    email_transport,
)

SMTP_TIMEOUT = 30.0
SLACK_TIMEOUT = 10.0


def smtp_settings(settings: Settings, *, timeout: float = SMTP_TIMEOUT) -> SmtpSettings | None:
    """``UPTIME_SMTP_*`` as transport settings; None without a host (file outbox)."""
    if not settings.smtp_host:
        return None
    return SmtpSettings(
        host=settings.smtp_host,
        port=settings.smtp_port,
        username=settings.smtp_username,
        password=settings.smtp_password,
        tls=settings.smtp_tls,  # type: ignore[arg-type]
        # The envelope sender is the bare address; the From header keeps the name.
        mail_from=parseaddr(settings.mail_from)[1],
        timeout=timeout,
    )


def email_transport_for(settings: Settings, *, timeout: float = SMTP_TIMEOUT) -> EmailTransport:
    smtp = smtp_settings(settings, timeout=timeout)
    context = None
    if smtp is not None and smtp.tls != "none":
        context = private_ca_context(settings)
    return email_transport(smtp, settings.outbox_dir, ssl_context=context)


def slack_transport_for(settings: Settings, *, timeout: float = SLACK_TIMEOUT) -> SlackTransport:
    return SlackTransport(
        timeout,
        block_private=settings.block_private_targets,
        ssl_context=private_ca_context(settings),
    )


def private_ca_context(settings: Settings) -> ssl.SSLContext | None:
    """The system trust store plus UPTIME_CA_BUNDLE, as for monitored services
    (docs/api.md#outbound-safety).

    None without a bundle: the transport's default is the system store.
    """
    if not settings.ca_bundle:
        return None
    context = ssl.create_default_context()
    context.load_verify_locations(cafile=settings.ca_bundle)
    return context
