"""API requests that meet a lost database answer 503 and log one line, not a traceback each."""

from __future__ import annotations

import sqlite3
from typing import Any

import peewee

DOWN = "postgresql://nobody@127.0.0.1:1/none"  # nothing listens on port 1 of the loopback


def test_requests_answer_503_with_retry_after_while_the_database_is_gone(
    settings: Any, clock: Any, caplog: Any, alice: Any
) -> None:
    from uptime_server.app import create_app
    from uptime_server.db import outages as db_outages

    db_outages.REQUESTS._last = None  # another test's outage must not quiet this one
    client = create_app(settings.with_overrides(database_url=DOWN), clock=clock).test_client()
    caplog.clear()
    client.set_cookie("session_cookie", alice.token)  # a real session, of a database gone
    answers = [
        client.get("/api/v1/monitors"),
        client.get("/api/v1/monitors/1"),
        client.post("/api/v1/monitors", json={"name": "x", "type": "http"}),
    ]
    for response in answers:
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "5"
        assert response.get_json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    warnings = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert [r.getMessage().split(" (")[0] for r in warnings] == [
        "database unavailable for API requests"
    ]
    assert not [r for r in caplog.records if r.exc_info]


def test_a_statements_own_error_is_still_a_500_with_its_traceback(app: Any, caplog: Any) -> None:
    from uptime_server.app import _database_error

    own = peewee.OperationalError("no such column: nope")
    own.orig = sqlite3.OperationalError("no such column: nope")  # type: ignore[attr-defined]
    with app.test_request_context("/api/v1/monitors"):
        response = _database_error(own)
    assert response.status_code == 500
    assert response.get_json()["error"]["code"] == "INTERNAL_ERROR"
    assert [r for r in caplog.records if r.exc_info]


def test_the_warning_comes_again_after_a_quiet_minute(caplog: Any) -> None:
    from uptime_server.db.outages import RequestOutages

    now = [0.0]
    outages = RequestOutages(clock=lambda: now[0])
    gone = peewee.OperationalError("connection refused")
    for t in (0.0, 1.0, 59.0, 61.0):
        now[0] = t
        outages.failed(gone)
    lines = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(lines) == 2
    assert lines[1].endswith("(2 more in the last minute)")
