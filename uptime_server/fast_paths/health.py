"""``GET /healthz`` while a healthy answer is fresh, without Flask.

A load balancer polls ``/healthz`` hard. The view (``api/health.py``)
remembers a healthy answer (``Remembered``) and serves it again for
``HEALTHY_FOR_SECONDS``, so most polls ask nothing of the database; yet each
one still paid for Flask's request machinery. ``HealthPath`` answers such a
poll itself: the remembered body written as Flask's JSON provider writes it,
with the headers Flask sends, in its order (tests/fast_paths compare them
byte for byte). Otherwise (nothing remembered, a second gone, the last check
failed, any method but GET) Flask's view checks and remembers anew.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask.json.provider import JSONProvider

from uptime_server.clock import Clock
from uptime_server.wsgi.types import RESPONSE_HEADERS, Answer, Environ

PATH = "/healthz"
# A healthy answer is served again for this long (by the wall clock and the
# app's clock both), so a load balancer polling hard costs no query each time.
HEALTHY_FOR_SECONDS = 1.0
# The memo the view and HealthPath share: AppState.health_memo, "last" -> Remembered.


@dataclass(frozen=True)
class Remembered:
    """A healthy answer, served again while fresh (by the view, and by ``HealthPath``)."""

    asked_at: datetime
    at: float  # time.monotonic() when asked
    body: dict[str, Any]

    def fresh(self, asked_at: datetime, at: float) -> bool:
        """Still to be served (by the wall clock and the app's clock both)."""
        return (
            0 <= at - self.at < HEALTHY_FOR_SECONDS
            and 0 <= (asked_at - self.asked_at).total_seconds() < HEALTHY_FOR_SECONDS
        )


class HealthPath:
    segments = ("healthz",)

    def __init__(self, memo: dict[str, Any], clock: Clock, json: JSONProvider) -> None:
        self.memo = memo  # the view's
        self.clock = clock
        self.json = json  # the app's, which writes the view's answer in Flask
        self._sent: tuple[Remembered, Answer] | None = None

    def answer(self, environ: Environ) -> Answer | None:
        if environ.get("PATH_INFO") != PATH or environ.get("REQUEST_METHOD") != "GET":
            return None
        last: Remembered | None = self.memo.get("last")
        if last is None or not last.fresh(self.clock.now(), time.monotonic()):
            return None
        sent = self._sent
        if sent is None or sent[0] is not last:
            sent = self._sent = (last, self._written(last))
        status, headers, body = sent[1]
        return (status, list(headers), body)  # the server may add to its list

    def _written(self, last: Remembered) -> Answer:
        """The answer Flask sends for the view's ``return last.body``."""
        # Flask's provider writes compact JSON with one newline, outside debug mode.
        body = (self.json.dumps(last.body, separators=(",", ":")) + "\n").encode()
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            *RESPONSE_HEADERS.items(),
            ("Vary", "Cookie"),  # Flask's session machinery adds it to every answer
        ]
        return ("200 OK", headers, body)
