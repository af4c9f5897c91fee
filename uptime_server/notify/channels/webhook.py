"""The webhook channel: the user's URL, method, headers and body templates.

Every request carries ``Idempotency-Key`` (the outbox row's message id, the
same on every retry, so a receiver can drop a repeat) and, with a ``secret``,
``X-Uptime-Signature: sha256=<hex HMAC-SHA256 of the raw body>`` in the style
of GitHub and Stripe. The URL may hold a token: only its host reaches errors
and logs. The connection is the guarded one of ``webhook_http``.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from typing import Any

from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.channels.templates import webhook_body
from uptime_server.notify.transports import GuardedHttp, webhook_host

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Uptime-Signature"
USER_AGENT = "uptime-webhook/1"


def signature(secret: str, body: bytes) -> str:
    """The X-Uptime-Signature value of *body*."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def request_for(config: dict[str, Any], message: ChannelMessage) -> tuple[dict[str, str], bytes]:
    """(headers, body) of the request for *message*: what the receiver gets."""
    body, is_default = webhook_body(config, message)
    headers = {"User-Agent": USER_AGENT, **(config.get("headers") or {})}
    if is_default or not any(k.lower() == "content-type" for k in headers):
        headers.setdefault("Content-Type", "application/json")
    headers["Idempotency-Key"] = message.message_id
    if config.get("secret"):
        headers[SIGNATURE_HEADER] = signature(config["secret"], body)
    return headers, body


class WebhookChannel(GuardedHttp):
    def send(self, config: dict[str, Any], message: ChannelMessage) -> None:
        url = config["url"]
        headers, body = request_for(config, message)
        label = f"webhook {webhook_host(url, 'webhook')}"
        self.request(url, config.get("method") or "POST", headers, body, label=label)
        log.info("%s accepted %s", label, message.message_id)
