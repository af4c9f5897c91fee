"""A channel sender for the API's "test" that cannot reach any network.

Generated requests (schemathesis) create channels with arbitrary URLs; a real
test message to them would leave the machine. ``OfflineChannelSender`` records
what it was asked to send and answers as a refused connection would, before
any socket, resolver or Apprise plugin exists.
"""

from __future__ import annotations

from typing import Any

from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.transports import TemporaryDeliveryError


class OfflineChannelSender:
    def __init__(self) -> None:
        self.asked: list[tuple[str, ChannelMessage]] = []

    def send(self, kind: str, config: dict[str, Any], message: ChannelMessage) -> None:
        self.asked.append((kind, message))
        raise TemporaryDeliveryError(f"{kind}: connection refused")
