"""The PagerDuty channel: Events API v2.

DOWN (and any other alert but a recovery) sends ``trigger``, UP sends
``resolve`` and an acknowledgement in uptime sends ``acknowledge``, all with
``dedup_key`` = the downtime notification's id, so PagerDuty folds them into
one incident; a reminder re-triggers that incident (PagerDuty dedups it).
``flapping`` triggers an incident of its own and ``flapping_settled``
resolves it. ``events_url`` defaults to PagerDuty's endpoint and can point
elsewhere (an EU account, a proxy, a test double); the routing key is a
secret and appears in no error or log line.
"""

from __future__ import annotations

import logging
from typing import Any

from uptime_server.notify.channels.message import ACKNOWLEDGE, ChannelMessage
from uptime_server.notify.channels.templates import summary
from uptime_server.notify.message import redact_text, redact_url
from uptime_server.notify.transports import GuardedHttp, webhook_host

log = logging.getLogger(__name__)

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"


def action_of(message: ChannelMessage) -> str:
    if message.event == ACKNOWLEDGE:
        return "acknowledge"
    # A settled flapping closes the flapping incident; a downtime it settled
    # into opens its own (the recorder writes it at the same evaluation).
    ends = message.is_recovery or message.content.kind == "flapping_settled"
    return "resolve" if ends else "trigger"


def event_for(config: dict[str, Any], message: ChannelMessage, action: str) -> dict[str, Any]:
    """The Events API v2 body for *message*."""
    event: dict[str, Any] = {
        "routing_key": config["routing_key"],
        "event_action": action,
        "dedup_key": message.dedup_key,
    }
    if action == "trigger":
        c = message.content
        event["payload"] = {
            # PagerDuty caps the summary at 1024 characters.
            "summary": summary(message)[:1024],
            "source": redact_url(c.monitor_url) or c.monitor_name,
            "severity": "info" if message.test else "critical",
            "timestamp": c.started_at.isoformat(),
            "component": c.monitor_name,
            "custom_details": {
                "status": message.status,
                "kind": c.kind,
                "error": redact_text(c.error),
                "status_code": c.status_code,
                "response_time": c.response_time,
                "notification_id": c.notification_id,
                "blocked": c.effects_json(),
            },
        }
    return event


class PagerDutyChannel(GuardedHttp):
    def send(self, config: dict[str, Any], message: ChannelMessage) -> None:
        url = config.get("events_url") or EVENTS_URL
        label = f"PagerDuty {webhook_host(url, 'PagerDuty events')}"
        # A test opens a PagerDuty incident and closes it again at once.
        actions = ["trigger", "resolve"] if message.test else [action_of(message)]
        for action in actions:
            event = event_for(config, message, action)
            self.post_json(url, event, label=label)
            log.info("%s accepted %s of %s", label, action, event["dedup_key"])
