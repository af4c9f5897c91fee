"""The API's waitress server: request bodies over 1 MiB are refused before they
are read, and waitress's own refusals come in the API's JSON error shape.

The server is the daemon's (``uptime_server.wsgi.server`` through
``tests.live_server``); requests are written on raw sockets where a test must
control how much of a body is sent.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from tests.api.shapes import sqlite_only
from tests.live_server import serving
from uptime_server.wsgi.errors import error_body
from uptime_server.wsgi.types import MAX_REQUEST_BODY

pytestmark = sqlite_only  # about the HTTP server, not the database
FIFTY_MB = 50 * 1024 * 1024


@pytest.fixture
def live(app: Any) -> Iterator[str]:
    with serving(app) as base:
        yield base


def connect(base: str) -> socket.socket:
    parts = urlsplit(base)
    return socket.create_connection((parts.hostname, parts.port), timeout=10)


def read_response(sock: socket.socket) -> tuple[http.client.HTTPResponse, Any]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    body = response.read()
    return response, json.loads(body)


def assert_json_error(response: http.client.HTTPResponse, body: Any, status: int, code: str):
    assert response.status == status
    assert response.getheader("Content-Type") == "application/json"
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["details"] == {}


def post_head(path: str, token: str, extra: str) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: session_cookie={token}\r\n"
        f"Content-Type: application/json\r\n{extra}\r\n"
    ).encode()


def test_a_declared_body_over_the_limit_is_refused_before_it_is_read(live: str, alice: Any):
    with connect(live) as sock:
        # The headers of a 50 MB upload and its first 64 KiB: nothing more is sent.
        sock.sendall(post_head("/api/v1/monitors", alice.token, f"Content-Length: {FIFTY_MB}\r\n"))
        sock.sendall(b'{"name": "' + b"x" * 65536)
        response, body = read_response(sock)
    assert_json_error(response, body, 413, "PAYLOAD_TOO_LARGE")
    assert alice.get("/api/v1/monitors").json["pagination"]["total"] == 0


def test_a_chunked_body_is_refused_once_past_the_limit(live: str, alice: Any):
    chunk = b"x" * 65536
    with connect(live) as sock:
        sock.sendall(post_head("/api/v1/monitors", alice.token, "Transfer-Encoding: chunked\r\n"))
        # 2 MiB and no closing chunk: a server that waited for the whole body would never answer.
        for _ in range(32):
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        response, body = read_response(sock)
    assert_json_error(response, body, 413, "PAYLOAD_TOO_LARGE")


def test_a_client_sending_all_of_a_50_mb_upload_gets_the_json_413(live: str, alice: Any):
    # The client writes on while the server has answered: the answer must not be lost.
    response = requests.post(
        f"{live}/api/v1/monitors",
        data=b"x" * FIFTY_MB,
        headers={"Cookie": f"session_cookie={alice.token}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_a_body_of_exactly_the_limit_reaches_the_app(live: str, alice: Any):
    body = b'{"name": "' + b"x" * (MAX_REQUEST_BODY - 12) + b'"}'
    assert len(body) == MAX_REQUEST_BODY
    response = requests.post(
        f"{live}/api/v1/monitors",
        data=body,
        headers={"Cookie": f"session_cookie={alice.token}", "Content-Type": "application/json"},
        timeout=30,
    )
    # Read and judged on its content: the name is too long, the url missing.
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_a_malformed_request_gets_the_json_shape(live: str):
    with connect(live) as sock:
        sock.sendall(b"POST /api/v1/monitors HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n")
        response, body = read_response(sock)
    assert_json_error(response, body, 400, "VALIDATION_ERROR")
    assert "Content-Length" in body["error"]["message"]


def test_waitress_and_flask_write_a_413_with_the_one_error_writer(live: str, alice: Any):
    """Waitress's refusal (a declared length over the limit) and Flask's own 413 (the
    test client, which has no such limit) are the same bytes: wsgi/errors.py's."""
    with connect(live) as sock:
        sock.sendall(post_head("/api/v1/monitors", alice.token, f"Content-Length: {FIFTY_MB}\r\n"))
        response = http.client.HTTPResponse(sock)
        response.begin()
        refused = response.read()
    expected = error_body("PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB")
    assert refused == expected
    through_flask = alice.post(
        "/api/v1/monitors", data=b"{}", environ_overrides={"CONTENT_LENGTH": str(FIFTY_MB)}
    )
    assert (through_flask.status_code, through_flask.data) == (413, expected)
