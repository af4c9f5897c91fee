"""Flask's cookie session: opened without a serializer when there is no cookie."""

from __future__ import annotations

from typing import Any

from flask.sessions import SecureCookieSession, SecureCookieSessionInterface


def test_it_opens_an_empty_session_without_a_cookie(app: Any) -> None:
    with app.test_request_context("/api/v1/monitors"):
        session = app.session_interface.open_session(app, _request())
    assert isinstance(session, SecureCookieSession)
    assert dict(session) == {} and not session.modified


def test_it_reads_a_signed_session_cookie_as_flask_does(app: Any) -> None:
    signed = SecureCookieSessionInterface().get_signing_serializer(app).dumps({"k": "v"})
    headers = {"Cookie": f"uptime_flask={signed}"}
    with app.test_request_context("/api/v1/monitors", headers=headers):
        assert dict(app.session_interface.open_session(app, _request())) == {"k": "v"}
    forged = {"Cookie": "uptime_flask=" + signed[:-2] + "xx"}
    with app.test_request_context("/api/v1/monitors", headers=forged):
        assert dict(app.session_interface.open_session(app, _request())) == {}


def _request() -> Any:
    from flask import request

    return request._get_current_object()
