"""The apprise channel: every other service through the Apprise library.

One Apprise URL per channel (``discord://…``, ``tgram://…``, ``ntfys://…``).
We do not write clients for those services; Apprise does.

Where the URL names a host the user chose (ntfy on one's own server, gotify,
matrix, mattermost, ``json://`` and friends), that host is resolved and every
address of the answer judged by the SSRF guard (docs/api.md#outbound-safety)
before Apprise is handed the URL, as for webhooks. Apprise then resolves the
name again itself: unlike webhooks, the connection is not pinned to the
checked address (docs/channels.md says so). Services at a fixed public host
(Discord, Telegram, PagerDuty's peers) are not judged: their host is not the
user's to choose.

An Apprise URL holds the service's token: Apprise's own log records are kept
out of ours, and an error names the scheme and host only.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import apprise

from uptime_server.net import guard
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.channels.templates import plain_text, summary
from uptime_server.notify.transports import PermanentDeliveryError, TemporaryDeliveryError

log = logging.getLogger(__name__)

# Schemes whose host part is a server the user picked (docs/channels.md).
USER_HOST_SCHEMES = frozenset(
    f"{base}{s}"
    for base in (
        "json",
        "xml",
        "form",
        "ntfy",
        "gotify",
        "matrix",
        "mmost",
        "rocket",
        "apprise",
        "workflow",
    )
    for s in ("", "s")
)
_APPRISE_LOG = logging.getLogger("apprise")
_captures = threading.local()


def _swallow(record: logging.LogRecord) -> bool:
    """Apprise's records quote URLs (tokens): none reaches a handler, ours or anyone's.

    A logger's filter runs before every handler attached to it or above it;
    warnings are kept for the error of the send in progress (``_quiet``).
    """
    lines = getattr(_captures, "lines", None)
    if lines is not None and record.levelno >= logging.WARNING:
        lines.append(record.getMessage())
    return False


_APPRISE_LOG.addFilter(_swallow)


def _asset() -> apprise.AppriseAsset:
    # No persistent cache on disk: a channel is a URL and nothing more.
    return apprise.AppriseAsset(storage_mode="memory")


def scheme_of(url: str) -> str:
    return url.partition("://")[0].lower()


def parse(url: str) -> Any:
    """The Apprise plugin for *url*, or ValueError; nothing is sent or resolved."""
    if "://" not in url:
        raise ValueError("must be an Apprise URL such as discord://… or ntfys://…")
    with _quiet():
        plugin = apprise.Apprise.instantiate(url, asset=_asset(), suppress_exceptions=True)
    if plugin is None:
        raise ValueError(f"is not an Apprise URL Apprise can use (scheme {scheme_of(url)[:20]!r})")
    return plugin


def user_host(url: str, plugin: Any) -> tuple[str, int | None] | None:
    """(host, port) the user chose for *url*, or None when the service's host is fixed."""
    if scheme_of(url) not in USER_HOST_SCHEMES:
        return None
    if scheme_of(url).startswith("ntfy") and str(getattr(plugin, "mode", "")) == "cloud":
        return None  # ntfy://topic goes to ntfy.sh
    host = getattr(plugin, "host", None)
    return (host, getattr(plugin, "port", None)) if host else None


def check_host(host: str, port: int | None, *, block_private: bool) -> None:
    """Every address *host* resolves to must be allowed, or PermanentDeliveryError."""
    literal = guard.parse_ip_host(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            answer = socket.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
        except OSError:
            raise TemporaryDeliveryError(f"apprise host {host}: name not resolved") from None
        addresses = [info[4][0] for info in answer]
    if not addresses or not all(
        guard.address_allowed(a, block_private=block_private) for a in addresses
    ):
        raise PermanentDeliveryError(f"apprise host {host}: {guard.TARGET_NOT_ALLOWED}")


@contextlib.contextmanager
def _quiet() -> Iterator[list[str]]:
    """The warnings Apprise logs in this thread meanwhile (and only here)."""
    _captures.lines = lines = []
    try:
        yield lines
    finally:
        _captures.lines = None


def scrub(text: str, url: str) -> str:
    """*text* without any part of *url* that may be a secret (user, password, path, query)."""
    parts = urlsplit(url)
    secrets = [parts.username, parts.password, *parts.path.split("/"), parts.query]
    secrets += [v for pair in parts.query.split("&") for v in pair.split("=")[1:]]
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


class AppriseChannel:
    def __init__(self, timeout: float, *, block_private: bool) -> None:
        self.timeout = timeout
        self.block_private = block_private

    def send(self, config: dict[str, Any], message: ChannelMessage) -> None:
        url = config["url"]
        try:
            plugin = parse(url)
        except ValueError as exc:
            raise PermanentDeliveryError(f"apprise {scheme_of(url)[:20]}: {exc}") from None
        chosen = user_host(url, plugin)
        label = f"apprise {scheme_of(url)}" + (f" {chosen[0]}" if chosen else "")
        if chosen:
            check_host(*chosen, block_private=self.block_private)
        plugin.socket_connect_timeout = self.timeout
        plugin.socket_read_timeout = self.timeout
        notifier = apprise.Apprise(asset=_asset())
        notifier.add(plugin)
        kind = apprise.NotifyType.SUCCESS if message.is_recovery else apprise.NotifyType.FAILURE
        if message.test:
            kind = apprise.NotifyType.INFO
        with _quiet() as said:
            ok = notifier.notify(
                title=f"[Uptime] {message.status}: {message.content.monitor_name}"[:250],
                body=summary(message) if message.test else plain_text(message),
                notify_type=kind,
            )
        if not ok:
            reason = scrub("; ".join(said[-2:]), url)[:300] or "no reason given"
            # Apprise does not say whether a failure is lasting: retry until the give-up age.
            raise TemporaryDeliveryError(f"{label}: not delivered ({reason})")
        log.info("%s accepted %s", label, message.message_id)
