"""Heartbeat pings: one request to a monitor's ping URL, retried within a deadline.

A ping URL is ``<server>/ping/<token>``; the kind of ping is a suffix
(docs/heartbeats.md): none for success, ``/start``, ``/fail``, ``/<exit code>``,
``/log``. The token is the credential, so a ping sends no session cookie and
no CSRF header, only the body (the run's message) and a User-Agent.

Deadline. A ping's attempts together never outlast ``deadline`` seconds:
each attempt's timeouts are cut to what is left, and the waits between
attempts (a short backoff, or the server's ``Retry-After`` on 429) stop
retrying when they would run past it. ``uptime exec`` relies on this: a
server that is down delays the end of the job by about one deadline.

Retried: no answer (refused, timed out), 5xx and 429. Not retried: any
other 4xx, because asking again cannot turn an unknown token (404) into a
known one. ``send`` never raises for the network; it returns a
``PingResult`` and the caller decides what to say.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import requests

from uptime_cli.client import USER_AGENT, connection_reason

# The server keeps a ping's body up to 10 KB as the run's message.
MAX_BODY = 10 * 1024
DEFAULT_DEADLINE = 10.0
MIN_DEADLINE = 0.1
DEFAULT_RETRIES = 4
CONNECT_TIMEOUT = 2.0  # a server that is up accepts at once; a dead one should not hold us
READ_TIMEOUT = 5.0
BACKOFF = 0.25  # first wait between attempts; doubles each time


@dataclass(frozen=True)
class PingResult:
    kind: str  # "success", "start", "fail", "log", or the exit code as text
    ok: bool
    attempts: int
    status: int | None = None  # the last HTTP status, None when nothing answered
    error: str | None = None  # why it failed, for a person

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "ok": self.ok,
            "status": self.status,
            "attempts": self.attempts,
            "error": self.error,
        }


def label(kind: str) -> str:
    """A kind of ping as a person reads it: "start", "exit code 3"."""
    return f"exit code {kind}" if kind.isdigit() else kind


def suffix(kind: str) -> str:
    """The path suffix of a kind of ping: success has none."""
    return "" if kind == "success" else f"/{kind}"


def tail(data: bytes, limit: int = MAX_BODY) -> bytes:
    """The last *limit* bytes of *data*, not starting inside a UTF-8 character."""
    if len(data) <= limit:
        return data
    cut = data[-limit:]
    skip = 0
    while skip < 3 and skip < len(cut) and 0x80 <= cut[skip] <= 0xBF:
        skip += 1  # a continuation byte: the character began before the cut
    return cut[skip:]


@dataclass
class Pinger:
    url: str  # the monitor's ping URL, without a kind suffix
    deadline: float = DEFAULT_DEADLINE
    retries: int = DEFAULT_RETRIES
    http: requests.Session = field(default_factory=requests.Session, repr=False)

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")
        self.http.headers.update({"User-Agent": USER_AGENT})

    def send(
        self,
        kind: str,
        body: bytes = b"",
        cancelled: threading.Event | None = None,
        deadline: float | None = None,
    ) -> PingResult:
        """POST one ping of *kind*; retry what may pass later, until the deadline.

        Setting *cancelled* gives up after the first attempt: a wait between
        attempts ends at once and no attempt follows. *deadline* replaces the
        pinger's for this ping.
        """
        ends = time.monotonic() + (self.deadline if deadline is None else deadline)
        url = self.url + suffix(kind)
        attempts, wait = 0, BACKOFF
        status: int | None = None
        error = "not sent"
        while True:
            left = ends - time.monotonic()
            if left <= 0:
                break
            attempts += 1
            status, error, retry_after = self._attempt(url, tail(body), left)
            if error is None:
                return PingResult(kind, True, attempts, status)
            if retry_after is None or attempts > self.retries:
                break
            pause = max(wait, retry_after)
            if time.monotonic() + pause >= ends:
                break
            if (cancelled or threading.Event()).wait(pause):
                break  # cancelled
            wait *= 2
        return PingResult(kind, False, attempts, status, error)

    def _attempt(
        self, url: str, body: bytes, left: float
    ) -> tuple[int | None, str | None, float | None]:
        """(status, error or None, seconds to wait before a retry or None for no retry)."""
        timeout = (min(CONNECT_TIMEOUT, left), min(READ_TIMEOUT, left))
        try:
            response = self.http.post(url, data=body, timeout=timeout, allow_redirects=False)
        except requests.Timeout:
            return None, "timed out", 0.0
        except requests.ConnectionError as exc:
            return None, connection_reason(exc), 0.0
        except requests.RequestException as exc:  # a malformed URL: asking again will not help
            return None, f"{exc.__class__.__name__}: {exc}", None
        status = response.status_code
        if status < 300:
            return status, None, 0.0
        reason = f"HTTP {status} {response.reason or ''}".strip()
        if status == 404:
            return status, f"{reason}: the server knows no such ping URL", None
        if status == 429:
            return status, reason, _retry_after(response.headers.get("Retry-After"))
        if status >= 500:
            return status, reason, 0.0
        return status, reason, None


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0  # an HTTP date: the backoff will do
