"""``GET /healthz`` in front of Flask while a healthy answer is fresh.

A load balancer polls ``/healthz`` hard. The view (``api/health.py``) serves
a healthy answer again for ``HEALTHY_FOR_SECONDS``, so most polls ask
nothing of the database, yet each one still paid for Flask's request
machinery (request context, hooks, login and limiter bookkeeping).
``HealthDispatcher`` keeps the bytes Flask sent for the view's remembered
answer (status, headers and body, as they left every after-request hook)
and, while that answer is fresh, sends them itself. Otherwise (nothing
remembered, a second gone, the last check failed, any method but GET) the
request goes to Flask, which checks and remembers anew. Wraps
``app.wsgi_app``, so waitress and Flask's test client both reach it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from uptime_server.clock import Clock

PATH = "/healthz"
# The view puts the answer it remembered here, in the request's WSGI environ.
ENVIRON_KEY = "uptime.healthy"
StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class HealthDispatcher:
    def __init__(self, app: WsgiApp, memo: dict[str, Any], clock: Clock) -> None:
        self.app = app
        self.memo = memo  # the view's: "last" -> api.health.Remembered
        self.clock = clock
        # (the Remembered it was sent for, status, headers, body)
        self._sent: tuple[Any, str, list[tuple[str, str]], bytes] | None = None

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != PATH or environ.get("REQUEST_METHOD") != "GET":
            return self.app(environ, start_response)
        sent, last = self._sent, self.memo.get("last")
        if sent is not None and sent[0] is last and last.fresh(self.clock.now(), time.monotonic()):
            start_response(sent[1], list(sent[2]))
            return [sent[3]]
        return self._through_flask(environ, start_response)

    def _through_flask(
        self, environ: dict[str, Any], start_response: StartResponse
    ) -> Iterable[bytes]:
        head: list[Any] = []

        def capture(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
            head[:] = [status, list(headers)]
            return start_response(status, headers, *exc_info)

        answer = self.app(environ, capture)
        try:
            body = b"".join(answer)
        finally:
            close = getattr(answer, "close", None)
            if close is not None:
                close()
        remembered = environ.get(ENVIRON_KEY)
        if remembered is not None and head and head[0].startswith("200 "):
            self._sent = (remembered, head[0], head[1], body)
        return [body]
