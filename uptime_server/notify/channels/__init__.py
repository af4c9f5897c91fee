"""Named notification channels: one sender per type, behind one ``ChannelSender``.

``email`` and ``slack`` reuse the transports of the implicit per-monitor
channels; ``webhook`` and ``pagerduty`` speak HTTP through the SSRF guard
(``webhook_http``); ``apprise`` hands the long tail to the Apprise library.
Every sender raises the delivery errors of ``notify.transports``, so the
delivery loop retries and gives up the same way whatever the type.

Speed tricks: none; a channel's cost is its service's round trip.
"""

from __future__ import annotations

from typing import Any

from uptime_server.config import Settings
from uptime_server.notify.channels.apprise_channel import AppriseChannel
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.channels.pagerduty import PagerDutyChannel
from uptime_server.notify.channels.webhook import WebhookChannel
from uptime_server.notify.message import build_email, slack_payload
from uptime_server.notify.senders import (
    SLACK_TIMEOUT,
    email_transport_for,
    private_ca_context,
    slack_transport_for,
)
from uptime_server.notify.transports import (
    EmailTransport,
    PermanentDeliveryError,
    SlackTransport,
)

CHANNEL_TYPES = ("email", "slack", "webhook", "pagerduty", "apprise")


class ChannelSender:
    """Sends one message to one channel, given its type and stored config."""

    def __init__(
        self,
        settings: Settings,
        *,
        timeout: float = SLACK_TIMEOUT,
        email: EmailTransport | None = None,
        slack: SlackTransport | None = None,
    ) -> None:
        self.mail_from = settings.mail_from
        block = settings.block_private_targets
        context = private_ca_context(settings)
        self.email = email or email_transport_for(settings, timeout=timeout)
        self.slack = slack or slack_transport_for(settings, timeout=timeout)
        self.webhook = WebhookChannel(timeout, block_private=block, ssl_context=context)
        self.pagerduty = PagerDutyChannel(timeout, block_private=block, ssl_context=context)
        self.apprise = AppriseChannel(timeout, block_private=block, allowed=settings.apprise_allow)

    def send(self, kind: str, config: dict[str, Any], message: ChannelMessage) -> None:
        if message.event != "alert" and kind != "pagerduty":
            return  # only PagerDuty hears of acknowledgements
        if kind == "email":
            self.email.send(
                build_email(
                    message.content,
                    sender=self.mail_from,
                    recipients=list(config["recipients"]),
                    message_id=message.message_id,
                )
            )
        elif kind == "slack":
            self.slack.post(config["webhook_url"], slack_payload(message.content))
        elif kind == "webhook":
            self.webhook.send(config, message)
        elif kind == "pagerduty":
            self.pagerduty.send(config, message)
        elif kind == "apprise":
            self.apprise.send(config, message)
        else:
            raise PermanentDeliveryError(f"unknown channel type {kind!r}")
