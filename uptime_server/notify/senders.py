"""The transports a daemon's settings ask for, and the Slack target check.

``UPTIME_SMTP_*`` become ``SmtpSettings`` (or the file outbox without a host);
a Slack webhook is user input like a monitor URL, so it passes the same
address rules before anything is posted to it.
"""

from __future__ import annotations

import socket
import ssl
from email.utils import parseaddr
from urllib.parse import urlsplit

from uptime_server.config import Settings
from uptime_server.engine.guard import address_allowed
from uptime_server.notify.transports import (
    EmailTransport,
    PermanentDeliveryError,
    SmtpSettings,
    TemporaryDeliveryError,
    email_transport,
)

SMTP_TIMEOUT = 30.0


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
    if smtp is not None and smtp.tls != "none" and settings.ca_bundle:
        # A private CA for the mail relay, like for monitored services (§5).
        context = ssl.create_default_context()
        context.load_verify_locations(cafile=settings.ca_bundle)
    return email_transport(smtp, settings.outbox_dir, ssl_context=context)


def check_webhook_target(url: str, block_private: bool) -> None:
    """Refuse a Slack webhook that resolves to an address checks may not reach.

    The webhook URL is user input like a monitor URL, so the same SSRF rules
    apply (link-local/metadata always, private ranges with block_private).
    """
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise PermanentDeliveryError("invalid Slack webhook URL") from None
    if not host:
        raise PermanentDeliveryError("Slack webhook URL has no host")
    try:
        infos = socket.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TemporaryDeliveryError(f"Slack webhook {host}: cannot resolve ({exc})") from None
    if any(not address_allowed(info[4][0], block_private=block_private) for info in infos):
        raise PermanentDeliveryError(f"Slack webhook {host}: target address not allowed")
