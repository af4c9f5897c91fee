"""Channels that carry an alert out of the process: SMTP, .eml files, Slack.

Each transport makes exactly one attempt and turns every failure into either
`TemporaryDeliveryError` (try again later) or `PermanentDeliveryError` (trying
again cannot help). Retry timing is the delivery loop's job; `backoff_delay`
is the schedule it should use.

When it is unclear which kind a failure is, it is reported as temporary: a
wrong "temporary" costs a few retries, a wrong "permanent" loses an alert.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import smtplib
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

import aiohttp

from uptime_server.net.errors import describe_error
from uptime_server.net.guard import TARGET_NOT_ALLOWED, TargetNotAllowed
from uptime_server.notify.webhook_http import WebhookReply, send

log = logging.getLogger(__name__)

TlsMode = Literal["starttls", "ssl", "none"]


class DeliveryError(Exception):
    """One delivery attempt failed. `code` is the SMTP/HTTP status, if any."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class TemporaryDeliveryError(DeliveryError):
    """Retry later: SMTP 4xx, network trouble, Slack 5xx/429."""

    def __init__(
        self, message: str, *, code: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after  # seconds the remote end asked us to wait


class PermanentDeliveryError(DeliveryError):
    """Give up: SMTP 5xx, every recipient refused, Slack 4xx, bad webhook URL."""


class EmailTransport(Protocol):
    def send(self, msg: EmailMessage) -> None: ...


# --- SMTP -------------------------------------------------------------------------


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int = 587
    username: str | None = None
    password: str | None = field(default=None, repr=False)  # never in logs or reprs
    tls: TlsMode = "starttls"
    mail_from: str = "uptime@localhost"
    timeout: float = 30
    # Name sent in EHLO; None lets smtplib use the machine's FQDN.
    helo_name: str | None = None

    def __post_init__(self) -> None:
        if self.tls not in ("starttls", "ssl", "none"):
            raise ValueError(f"tls must be starttls, ssl or none, not {self.tls!r}")
        if not 0 < self.port < 65536:
            raise ValueError(f"port out of range: {self.port}")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.password is not None and not self.username:
            raise ValueError("an SMTP password needs a username")


class SmtpTransport:
    """Sends one message per connection; every socket operation has a timeout."""

    def __init__(self, settings: SmtpSettings, *, ssl_context: ssl.SSLContext | None = None):
        self.settings = settings
        # Injected for private CAs (and tests); the default honours SSL_CERT_FILE.
        self._ssl_context = ssl_context

    @property
    def endpoint(self) -> str:
        return f"{self.settings.host}:{self.settings.port}"

    def send(self, msg: EmailMessage) -> None:
        recipients = envelope_recipients(msg)
        if not recipients:
            raise PermanentDeliveryError("message has no To recipients")
        try:
            refused = self._deliver(msg, recipients)
        except smtplib.SMTPRecipientsRefused as exc:
            raise _recipients_refused(exc.recipients, self.endpoint) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise _smtp_error(exc, self.endpoint) from None
        if refused:
            # Some recipients got it; retrying would send them a duplicate.
            log.warning("email %s refused for %s by %s", msg["Message-ID"], refused, self.endpoint)
        log.info(
            "email %s sent to %d recipient(s) via %s",
            msg["Message-ID"],
            len(recipients) - len(refused),
            self.endpoint,
        )

    def _deliver(self, msg: EmailMessage, recipients: list[str]) -> dict[str, tuple[int, bytes]]:
        smtp = self._connect()
        try:
            self._secure_and_login(smtp)
            return smtp.send_message(msg, from_addr=self.settings.mail_from, to_addrs=recipients)
        finally:
            _quit_quietly(smtp)

    def _context(self) -> ssl.SSLContext:
        return self._ssl_context or ssl.create_default_context()

    def _connect(self) -> smtplib.SMTP:
        s = self.settings
        if s.tls == "ssl":
            return smtplib.SMTP_SSL(
                s.host,
                s.port,
                local_hostname=s.helo_name,
                timeout=s.timeout,
                context=self._context(),
            )
        return smtplib.SMTP(s.host, s.port, local_hostname=s.helo_name, timeout=s.timeout)

    def _secure_and_login(self, smtp: smtplib.SMTP) -> None:
        s = self.settings
        if s.tls == "starttls":
            smtp.ehlo()
            smtp.starttls(context=self._context())
            smtp.ehlo()
        if s.username:
            smtp.login(s.username, s.password or "")


def _quit_quietly(smtp: smtplib.SMTP) -> None:
    # Once DATA is accepted the email is delivered; a failed QUIT must not turn
    # that into an error, or the retry would send a duplicate.
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()


def envelope_recipients(msg: EmailMessage) -> list[str]:
    """Envelope recipients from the To header only (never Cc/Bcc)."""
    return [addr for _, addr in getaddresses(msg.get_all("To", [])) if addr]


def _recipients_refused(recipients: dict[str, tuple[int, bytes]], endpoint: str) -> DeliveryError:
    codes = sorted({code for code, _ in recipients.values()})
    message = f"{endpoint} refused all recipients ({_describe_replies(recipients)})"
    # If any refusal was 4xx, a later attempt may get through.
    if any(400 <= code < 500 for code in codes):
        return TemporaryDeliveryError(message, code=codes[0])
    return PermanentDeliveryError(message, code=codes[-1] if codes else None)


def _describe_replies(recipients: dict[str, tuple[int, bytes]]) -> str:
    return "; ".join(
        f"{addr}: {code} {_decode(reply)}" for addr, (code, reply) in recipients.items()
    )


def _decode(reply: bytes | str) -> str:
    text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply
    return " ".join(text.split())[:200]


def _smtp_error(exc: Exception, endpoint: str) -> DeliveryError:
    if isinstance(exc, smtplib.SMTPResponseException):
        message = f"{endpoint} answered {exc.smtp_code} {_decode(exc.smtp_error)}"
        if 500 <= exc.smtp_code < 600:
            return PermanentDeliveryError(message, code=exc.smtp_code)
        return TemporaryDeliveryError(message, code=exc.smtp_code)
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        # The server lacks STARTTLS/AUTH: a configuration mismatch that no
        # retry of this message will fix.
        return PermanentDeliveryError(f"{endpoint}: {exc}")
    if isinstance(exc, TimeoutError):
        return TemporaryDeliveryError(f"{endpoint}: timed out")
    # Disconnects, refused connections, DNS and TLS failures, and anything
    # smtplib did not classify: the server or network may come back.
    return TemporaryDeliveryError(f"{endpoint}: {type(exc).__name__}: {exc}")


# --- .eml files --------------------------------------------------------------------

_UNSAFE_FILENAME_CHARS = re.compile(r"[^A-Za-z0-9._@+-]")


class FileTransport:
    """Writes each email to `<directory>/<message-id>.eml` (the no-SMTP default).

    The file name comes from the Message-ID, so re-sending the same email
    replaces the file instead of adding a second one.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path_for(self, msg: EmailMessage) -> Path:
        message_id = msg.get("Message-ID")
        if not message_id:
            raise PermanentDeliveryError("message has no Message-ID; cannot name the file")
        return self.directory / f"{eml_filename_stem(str(message_id))}.eml"

    def send(self, msg: EmailMessage) -> None:
        path = self.path_for(msg)
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            _write_atomically(path, msg.as_bytes())
        except OSError as exc:  # disk full, permissions: may be fixed later
            raise TemporaryDeliveryError(f"cannot write {path}: {exc}") from None
        log.info("email %s written to %s", msg["Message-ID"], path)


def eml_filename_stem(message_id: str) -> str:
    """File-system-safe name for a Message-ID.

    When characters had to be replaced, a short hash of the original is added
    so two different ids can never map to the same file.
    """
    raw = message_id.strip().removeprefix("<").removesuffix(">")
    safe = _UNSAFE_FILENAME_CHARS.sub("_", raw)[:150].lstrip(".") or "message"
    if safe != raw:
        safe += "-" + hashlib.sha256(message_id.encode()).hexdigest()[:10]
    return safe


def _write_atomically(path: Path, data: bytes) -> None:
    # Temp file in the same directory, then rename: readers never see half a
    # message, and a crash leaves at most a stray dot-file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def email_transport(
    smtp: SmtpSettings | None, outbox_dir: Path, *, ssl_context: ssl.SSLContext | None = None
) -> EmailTransport:
    """SMTP when a host is configured, otherwise .eml files (docs/api.md#delivery)."""
    if smtp is None or not smtp.host:
        return FileTransport(outbox_dir)
    return SmtpTransport(smtp, ssl_context=ssl_context)


# --- Slack ----------------------------------------------------------------------------


class GuardedHttp:
    """Requests to URLs users typed, through the SSRF guard, every failure typed.

    Such a URL may hold a secret (a Slack webhook's path is its token), so
    errors and logs name its host only. The connection goes to an address
    the guard approved (see `webhook_http`).
    """

    def __init__(
        self,
        timeout: float = 10,
        *,
        block_private: bool = False,
        ssl_context: ssl.SSLContext | None = None,
    ):
        self.timeout = timeout
        self.block_private = block_private
        # Injected for UPTIME_CA_BUNDLE (and tests); None is the system store.
        self._ssl_context = ssl_context

    def request(
        self, url: str, method: str, headers: dict[str, str], body: bytes, *, label: str
    ) -> WebhookReply:
        """Send; a non-2xx answer or a failure raises a DeliveryError worded with *label*."""
        try:
            reply = send(
                url,
                method,
                headers,
                body,
                timeout=self.timeout,
                block_private=self.block_private,
                ssl_context=self._ssl_context,
            )
        except Exception as exc:  # the module edge: every failure is typed
            raise http_send_error(exc, label, self.timeout) from None
        check_http_reply(reply, label)
        return reply

    def post_json(self, url: str, payload: object, *, label: str) -> WebhookReply:
        body = json.dumps(payload).encode()
        return self.request(url, "POST", {"Content-Type": "application/json"}, body, label=label)


class SlackTransport(GuardedHttp):
    """POSTs a JSON payload to a Slack incoming webhook, through the SSRF guard."""

    def post(self, webhook_url: str, payload: dict[str, object]) -> None:
        host = webhook_host(webhook_url)
        self.post_json(webhook_url, payload, label=f"Slack webhook {host}")
        log.info("slack message posted to %s", host)


def webhook_host(url: str, what: str = "Slack webhook") -> str:
    """The host of an http(s) URL, the only part of it errors and logs may show."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
    if not host or parts.scheme not in ("http", "https"):
        raise PermanentDeliveryError(f"{what} URL must be an http(s) URL with a host")
    return host


def http_send_error(exc: Exception, label: str, timeout: float) -> DeliveryError:
    """A failed request to *label* (e.g. ``Slack webhook hooks.slack.com``) as a typed error."""
    # Messages are built from the label and the failure's kind only: str(exc)
    # of a URL or client error would quote the URL path, i.e. the token.
    if isinstance(exc, TargetNotAllowed):
        return PermanentDeliveryError(f"{label}: {TARGET_NOT_ALLOWED}")
    if isinstance(exc, TimeoutError):  # aiohttp's timeouts subclass it
        return TemporaryDeliveryError(f"{label}: timed out")
    if isinstance(exc, aiohttp.InvalidURL):
        return PermanentDeliveryError(f"invalid URL for {label}")
    # Before ValueError: a certificate error is one too, and may be fixed.
    if isinstance(exc, aiohttp.ClientError | OSError):
        reason = describe_error(exc, round(timeout))
        if reason == TARGET_NOT_ALLOWED:  # refused at connect()
            return PermanentDeliveryError(f"{label}: {reason}")
        return TemporaryDeliveryError(f"{label}: {reason}")
    if isinstance(exc, ValueError):  # yarl's verdict on the URL
        return PermanentDeliveryError(f"invalid URL for {label}")
    return TemporaryDeliveryError(f"{label}: {type(exc).__name__}")


def check_http_reply(reply: WebhookReply, label: str) -> None:
    """A 2xx passes; 408, 429 and 5xx may pass later; any other status never will.

    The error names the status only, as a monitor's does: the body is the
    target's words, and a channel pointed at an internal URL must not read
    that service back one test message at a time.
    """
    status = reply.status
    if 200 <= status < 300:
        return
    message = f"{label} answered {status}"
    if status == 429 or status == 408 or status >= 500:
        raise TemporaryDeliveryError(
            message, code=status, retry_after=_retry_after(reply.headers.get("Retry-After"))
        )
    raise PermanentDeliveryError(message, code=status)


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # the HTTP-date form; the backoff schedule covers it
        return None


# --- retry schedule -------------------------------------------------------------------


def backoff_delay(
    attempt: int,
    *,
    base: float = 30,
    cap: float = 86400,
    rng: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait after the `attempt`-th failed attempt (1-based).

    Nominal delay is `base * 2**(attempt-1)` (30 s, 60 s, 120 s, ...), with
    ±20 % jitter so a mail server coming back is not hit by every queued email
    at once, and never more than `cap` (24 h). `rng` returns [0, 1); 0.5 gives
    the nominal delay exactly.
    """
    if attempt < 1:
        raise ValueError(f"attempt is 1-based, got {attempt}")
    exponent = min(attempt - 1, 64)  # 30 s * 2**64 is far past any cap
    nominal = min(cap, base * 2.0**exponent)
    jittered = nominal * (0.8 + 0.4 * rng())
    return min(cap, jittered)
