"""The apprise channel: every other service through the Apprise library.

One Apprise URL per channel (``discord://…``, ``tgram://…``, ``ntfys://…``).
We do not write clients for those services; Apprise does.

Which URLs are refused before anything is sent, and which host is whose,
is ``apprise_schemes``: a scheme that opens its own sockets needs the
operator's ``UPTIME_APPRISE_ALLOW``, a parameter that would make the server
read a file into the message is refused, and the host a user names is
judged by the SSRF guard (docs/api.md#outbound-safety), an IP literal at
create time already. While the plugin sends, every connection it opens goes
through ``net/socket_guard``: each name is resolved once and every address
of the answer judged, and the connection goes to an address that was judged
(there is no second lookup for DNS rebinding to answer), redirects and a
plugin's further requests included.

An error says what the guard and the sockets saw, in the same few words for
every plugin: the target address was refused, the name did not resolve, the
service answered a status, or no answer came (refused, reset and timed-out
connections alike). Nothing the peer sent is quoted, and Apprise's own log
records (which quote URLs, i.e. tokens, and the peers' answers) are kept
out of every log. The time a test takes still tells a closed port from a
silent one, as for webhooks (docs/channels.md#apprise).

The message's title and body pass ``printable``: a control character in a
monitor's name or error does not reach a chat service or a terminal.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import apprise

from uptime_server.net import guard, socket_guard
from uptime_server.notify.channels.apprise_schemes import scheme_of, vet
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.channels.templates import plain_text, summary
from uptime_server.notify.transports import (
    DeliveryError,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)
from uptime_server.printable import printable

log = logging.getLogger(__name__)


def _swallow(record: logging.LogRecord) -> bool:
    # A logger's filter runs before every handler attached to it or above it.
    return False


logging.getLogger("apprise").addFilter(_swallow)

# urllib3, under requests, logs every request line at DEBUG, path and query
# included, and Discord, Slack and Telegram keep their tokens in the path.
# Pinned to INFO (as db.py pins peewee) so UPTIME_LOG_LEVEL=DEBUG never
# records them.
for _name in ("urllib3", "requests"):
    logging.getLogger(_name).setLevel(logging.INFO)


def _asset() -> apprise.AppriseAsset:
    # No persistent cache on disk: a channel is a URL and nothing more.
    return apprise.AppriseAsset(storage_mode="memory")


def parse(url: str, *, block_private: bool = True) -> Any:
    """The Apprise plugin for *url*, or ValueError; nothing is sent.

    Parsing opens no connection; were a plugin to, its connection is judged.
    """
    if "://" not in url:
        raise ValueError("must be an Apprise URL such as discord://… or ntfys://…")
    try:
        with socket_guard.guarded(block_private=block_private):
            plugin = apprise.Apprise.instantiate(url, asset=_asset(), suppress_exceptions=True)
    except OSError:
        plugin = None
    if plugin is None:
        raise ValueError(f"is not an Apprise URL Apprise can use (scheme {scheme_of(url)[:20]!r})")
    return plugin


def message_text(message: ChannelMessage) -> tuple[str, str]:
    """(title, body) as sent: each value printable, the body's own line breaks kept."""
    c = message.content
    clean = replace(
        message,
        content=replace(
            c,
            monitor_name=printable(c.monitor_name) or "",
            monitor_url=printable(c.monitor_url) or "",
            error=printable(c.error) or "",
            blocked_down=tuple(printable(name) or "" for name in c.blocked_down),
        ),
    )
    title = f"[Uptime] {clean.status}: {clean.content.monitor_name}"
    return title[:250], summary(clean) if clean.test else plain_text(clean)


class AppriseChannel:
    def __init__(
        self, timeout: float, *, block_private: bool, allowed: tuple[str, ...] = ()
    ) -> None:
        self.timeout = timeout
        self.block_private = block_private
        self.allowed = allowed  # UPTIME_APPRISE_ALLOW

    def send(self, config: dict[str, Any], message: ChannelMessage) -> None:
        url = config["url"]
        scheme = scheme_of(url)[:20]
        try:
            plugin = parse(url, block_private=self.block_private)
            hosts = vet(url, plugin, allowed=self.allowed)
        except ValueError as exc:
            raise PermanentDeliveryError(f"apprise {scheme}: {exc}") from None
        for host in hosts:  # an IP literal is judged before anything is sent
            literal = guard.parse_ip_host(host)
            if literal is not None and not guard.address_allowed(
                literal, block_private=self.block_private
            ):
                raise PermanentDeliveryError(f"apprise host {host}: {guard.TARGET_NOT_ALLOWED}")
        plugin.socket_connect_timeout = self.timeout
        plugin.socket_read_timeout = self.timeout
        # Our outbox retries, on its own schedule; a URL's ?retry=&wait= must
        # not hold the delivery thread.
        plugin.retry, plugin.wait = 0, 0
        kind = apprise.NotifyType.SUCCESS if message.is_recovery else apprise.NotifyType.FAILURE
        if message.test:
            kind = apprise.NotifyType.INFO
        title, body = message_text(message)
        with socket_guard.guarded(block_private=self.block_private) as seen:
            try:
                ok = bool(plugin.notify(body=body, title=title, notify_type=kind))
            except Exception:  # a plugin's own bug: Apprise would swallow it too
                ok = False
        label = f"apprise {scheme}"
        named = [h for h in hosts if h in seen.allowed or h in seen.refused]
        if named:
            label += f" {named[0]}"
        if not ok:
            raise failure(label, hosts, seen)
        log.info("%s accepted %s", label, message.message_id)


def failure(label: str, hosts: list[str], seen: socket_guard.Scope) -> DeliveryError:
    """Why a send failed, from what the guard saw; never the peer's words.

    A host is named only when the user typed it: a refused redirect target
    came from the peer.
    """
    refused = [h for h in seen.refused if h in hosts]
    if refused:
        return PermanentDeliveryError(f"apprise host {refused[0]}: {guard.TARGET_NOT_ALLOWED}")
    if seen.refused:
        return PermanentDeliveryError(f"{label}: {guard.TARGET_NOT_ALLOWED}")
    unresolved = [h for h in seen.unresolved if h in hosts]
    if unresolved:
        return TemporaryDeliveryError(f"apprise host {unresolved[0]}: name not resolved")
    failed = [s for s in seen.statuses if not 200 <= s < 300]
    if failed:
        status = failed[-1]
        if status in (408, 429) or status >= 500:
            return TemporaryDeliveryError(f"{label} answered {status}", code=status)
        return PermanentDeliveryError(f"{label} answered {status}", code=status)
    if seen.unanswered or seen.unresolved:
        return TemporaryDeliveryError(f"{label}: no answer")
    # Apprise does not say whether a failure is lasting: retry until the give-up age.
    return TemporaryDeliveryError(f"{label}: not delivered")
