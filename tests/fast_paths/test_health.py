"""The /healthz fast path (fast_paths/health) against Flask's answer, byte for byte.

A fresh healthy answer goes once through Flask, which remembers it; the same
request then goes through the app (the fast path answers, Flask is not
reached) and through Flask alone (the view serves what it remembered), and
the two answers are compared: status, headers in order, body. Through
waitress too, where the server adds its own headers.
"""

from __future__ import annotations

from typing import Any

import pytest
from werkzeug.test import Client

from tests.api.shapes import sqlite_only
from tests.fast_paths.test_public_pages import raw_get
from tests.live_server import serving

pytestmark = sqlite_only


@pytest.fixture
def parts(settings: Any, clock: Any, db: Any) -> tuple[Any, Client, Client, list[str]]:
    from uptime_server.app import create_app
    from uptime_server.wsgi.context import app_state

    app = create_app(
        settings, clock=clock, services={"scheduler_lag": lambda: 0.1234567}, bind_database=False
    )
    fast_paths = app_state(app).fast_paths
    behind, reached = fast_paths.app, []

    def spy(environ: dict[str, Any], start_response: Any) -> Any:
        reached.append(environ["PATH_INFO"])
        return behind(environ, start_response)

    fast_paths.app = spy
    return app, Client(app), Client(behind), reached


def test_a_fresh_answer_is_flasks(parts: Any) -> None:
    app, fast, flask, reached = parts
    first = fast.get("/healthz")  # through Flask: remembered
    assert reached == ["/healthz"] and first.status_code == 200
    reached.clear()
    ours, theirs = fast.get("/healthz"), flask.get("/healthz")
    assert reached == []
    assert ours.status == theirs.status == first.status
    assert ours.headers.to_wsgi_list() == theirs.headers.to_wsgi_list()
    assert ours.data == theirs.data == first.data
    assert ours.get_json()["scheduler_lag_seconds"] == 0.1234567


def test_through_waitress_the_bytes_are_flasks(parts: Any) -> None:
    app, _fast, _flask, reached = parts
    fast_paths = app.wsgi_app
    with serving(app, threads=2) as base:
        first = raw_get(base, "/healthz")
        ours = raw_get(base, "/healthz")
        app.wsgi_app = fast_paths.app  # Flask alone, serving what it remembered
        try:
            theirs = raw_get(base, "/healthz")
        finally:
            app.wsgi_app = fast_paths
    assert reached == ["/healthz", "/healthz"]  # the first, then Flask alone
    assert ours == theirs == first
    assert ours.startswith(b"HTTP/1.1 200 OK\r\n")
