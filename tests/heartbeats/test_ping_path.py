"""The ping route (fast_paths/pings): every ping answered without Flask, other paths handed on."""

from __future__ import annotations

import io
import socket
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.conftest import recv_until
from tests.heartbeats.conftest import history, make_heartbeat, ping_path
from tests.live_server import serving
from uptime_server.fast_paths.pings import PingLimit
from uptime_server.models import CheckRun
from uptime_server.wsgi.context import app_state

pytestmark = sqlite_only


def flask_refused(app: Any) -> list[str]:
    """Put a WSGI app behind the fast paths that answers 418 and notes what reached it."""
    reached: list[str] = []

    def behind(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        reached.append(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
        start_response("418 I'M A TEAPOT", [("Content-Type", "text/plain")])
        return [b""]

    app_state(app).fast_paths.app = behind
    return reached


def test_pings_are_answered_before_flask(app: Any, alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    reached = flask_refused(app)
    assert anon.get(ping_path(m)).data == b"OK\n"
    assert anon.post(ping_path(m, "fail"), data=b"boom").status_code == 200
    head = anon.head(ping_path(m, "0"))
    assert (head.status_code, head.data, head.headers["Content-Length"]) == (200, b"", "3")
    assert_error(anon.get("/ping/unknown-token"), 404, "NOT_FOUND")
    assert_error(anon.get(ping_path(m, "256")), 404, "NOT_FOUND")
    assert reached == []
    assert CheckRun.select().count() == 3
    # Other methods are the ping route's too (there is no Flask route to answer them).
    put = anon.put(ping_path(m))
    assert_error(put, 405, "METHOD_NOT_ALLOWED")
    assert set(put.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "POST"}
    assert anon.options(ping_path(m)).status_code == 200
    assert reached == []
    # Paths that name no token, and other paths, are Flask's.
    assert anon.get(ping_path(m, "log/more")).status_code == 418
    assert anon.get("/ping/").status_code == 418
    assert anon.get("/pingx").status_code == 418
    assert len(reached) == 3


def post_chunked(client: Any, path: str, body: bytes, headers: dict[str, str]) -> Any:
    """POST *body* as a WSGI server that passes a chunked body on hands it over.

    No CONTENT_LENGTH, ``Transfer-Encoding: chunked`` and an input that ends
    with the body (``wsgi.input_terminated``), as gunicorn or Werkzeug's own
    server do; the test client would otherwise declare the length.
    """
    return client.post(
        path,
        input_stream=io.BytesIO(body),
        headers={"Transfer-Encoding": "chunked", **headers},
        environ_overrides={"CONTENT_LENGTH": "", "wsgi.input_terminated": True},
    )


def test_a_chunked_body_on_the_wire_is_the_message(app: Any, alice: Any) -> None:
    """A real chunked request, chunk by chunk and no Content-Length, to the daemon's server."""
    m = make_heartbeat(alice)
    with serving(app, threads=2) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                f"POST {ping_path(m, 'log')} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
            )
            for chunk in (b"8\r\nchunked \r\n", b"4\r\nline\r\n", b"0\r\n\r\n"):
                sock.sendall(chunk)
            reply = recv_until(sock, b"\r\n\r\nOK\n")
    assert reply.startswith(b"HTTP/1.1 200 "), reply
    assert history(alice, m["id"])[0]["message"] == "chunked line"


def test_a_chunked_body_without_a_length_is_the_message(app: Any, alice: Any, anon: Any) -> None:
    m = make_heartbeat(alice)
    flask = app_state(app).fast_paths.app
    reached = flask_refused(app)
    response = post_chunked(anon, ping_path(m, "log"), b"chunked line", {})
    assert response.status_code == 200
    assert reached == []  # the ping route reads the body itself
    app_state(app).fast_paths.app = flask
    assert history(alice, m["id"])[0]["message"] == "chunked line"


# An ESC sequence that would recolour a terminal, a bell, a CR that rewrites
# the line, a NUL, a C1 CSI and DEL: none is stored, words stay apart.
NOISY = "disk \x1b[31mfull\x07\r\nsee\tlog\x00\x9b2J\x7f end".encode()
CLEAN = "disk [31mfull  see log2J end"
CONTROLS = {*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0))}


@pytest.mark.parametrize("suffix", ["fail", "log", "3"])
@pytest.mark.parametrize("path", ["length", "chunked"])
def test_control_characters_in_a_body_are_not_stored(
    app: Any, alice: Any, anon: Any, suffix: str, path: str
) -> None:
    m = make_heartbeat(alice)
    flask = app_state(app).fast_paths.app
    reached = flask_refused(app)
    if path == "length":
        response = anon.post(ping_path(m, suffix), data=NOISY, headers={"User-Agent": "j\x1bob"})
    else:
        response = post_chunked(anon, ping_path(m, suffix), NOISY, {"User-Agent": "j\x1bob"})
    assert reached == []  # answered before Flask
    app_state(app).fast_paths.app = flask
    assert response.status_code == 200
    [run] = CheckRun.select()
    assert run.message == CLEAN
    assert run.user_agent == "job"
    if suffix == "log":
        assert run.error is None
    else:
        what = "failure reported" if suffix == "fail" else "exit code 3"
        assert run.error == f"{what}: disk [31mfull"  # the first line, as ever
    shown = history(alice, m["id"])[0]
    assert not CONTROLS & set(shown["message"] + (shown.get("error") or ""))


def test_a_failing_rate_limit_store_answers_in_the_error_shape(
    app: Any, alice: Any, anon: Any
) -> None:
    class Unreachable:
        """A limiter strategy whose storage is down (as a stopped Redis would be)."""

        def hit(self, *_args: Any) -> bool:
            raise ConnectionError("storage down")

        def get_window_stats(self, *_args: Any) -> Any:
            raise ConnectionError("storage down")

    m = make_heartbeat(alice)
    app_state(app).fast_paths.paths["ping"].limit = PingLimit(Unreachable(), "60/minute", None)
    assert_error(anon.get(ping_path(m)), 500, "INTERNAL_ERROR")
    assert CheckRun.select().count() == 0
