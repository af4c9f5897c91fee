"""What a channel is asked to send: an alert, an acknowledgement, or a test.

Channels are generic over the notification's kind: a ``downtime`` or any
other kind that reports trouble (cert expiry, reminders, flapping) renders as
DOWN-style, a ``recovery`` as UP-style. Only PagerDuty distinguishes more,
by the outbox row's ``event``.
"""

from __future__ import annotations

from dataclasses import dataclass

from uptime_server.notify.message import AlertContent

ALERT = "alert"
ACKNOWLEDGE = "acknowledge"
EVENTS = (ALERT, ACKNOWLEDGE)


@dataclass(frozen=True)
class ChannelMessage:
    content: AlertContent
    # The outbox row's message id: the webhook's Idempotency-Key.
    message_id: str
    event: str = ALERT
    # The incident this message is about: the downtime's notification id,
    # also for its recovery (PagerDuty's dedup_key).
    incident_id: int | None = None
    test: bool = False

    @property
    def is_recovery(self) -> bool:
        return self.content.kind == "recovery"

    @property
    def status(self) -> str:
        """DOWN, UP, ACKNOWLEDGED or TEST, or the upper-cased kind of other alerts."""
        if self.test:
            return "TEST"
        if self.event == ACKNOWLEDGE:
            return "ACKNOWLEDGED"
        return {"downtime": "DOWN", "recovery": "UP"}.get(
            self.content.kind, self.content.kind.upper()
        )

    @property
    def dedup_key(self) -> str:
        return str(self.incident_id or self.content.notification_id)
