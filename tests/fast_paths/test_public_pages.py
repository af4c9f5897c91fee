"""The public fast path (fast_paths/public_pages): cached answers equal Flask's, byte for byte.

Each case sends one request twice through the real WSGI app: once through
``app`` (the fast path in front, Flask behind it) and once to what the fast
path wraps (Flask alone), and compares status, headers (names, values and
order; Date only to the second) and body. A spy behind the fast path tells
which requests it answered itself and which it handed to Flask.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

import pytest
from werkzeug.http import parse_date
from werkzeug.test import Client, TestResponse

from tests.api.shapes import sqlite_only
from tests.live_server import serving
from uptime_server.models import Monitor
from uptime_server.wsgi.context import app_state

pytestmark = sqlite_only

MONITORS = "/api/v1/monitors"
GZIP = {"Accept-Encoding": "gzip"}
ETAG = "<etag>"  # in a case's headers: the ETag of the same request's 200 answer


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    # A small budget: were public answers counted (on either path), cases would hit 429.
    return {**settings_env, "UPTIME_RATE_LIMIT": "20/minute"}


@dataclass
class Scene:
    app: Any
    alice: Any
    monitor: dict[str, Any]
    fast: Client  # the app as waitress calls it: the fast path, then Flask
    flask: Client  # Flask alone (what the fast path wraps)
    reached: list[str]  # paths the fast path handed to Flask

    def step(self, name: str, path: str, headers: dict[str, str]) -> None:
        mid = self.monitor["id"]
        if name == "warm":  # through Flask alone, which fills the cache
            self.flask.get(path, headers={k: v for k, v in headers.items() if k != "If-None-Match"})
        elif name == "rotate":
            assert self.alice.post(f"{MONITORS}/{mid}/badge-token").status_code == 200
        elif name == "badges_off":
            assert self.alice.put(f"{MONITORS}/{mid}", json={"badges": False}).status_code == 200
        elif name == "maintenance":
            body = {"title": "deploy", "monitor_ids": [mid]}
            window = self.alice.post("/api/v1/maintenance", json=body).get_json()["data"]
            assert self.alice.post(f"/api/v1/maintenance/{window['id']}/start").status_code == 200
        else:
            raise AssertionError(name)


@pytest.fixture
def scene(app: Any, alice: Any, make_monitor: Any, history: Any) -> Scene:
    monitor = history(make_monitor("api"), down=(3,), days=10)
    data = alice.put(f"{MONITORS}/{monitor.id}", json={"badges": True}).get_json()["data"]
    page = {
        "slug": "acme",
        "title": "Acme",
        "groups": [{"heading": "API", "monitor_ids": [monitor.id]}],
    }
    assert alice.post("/api/v1/status-pages", json=page).status_code == 201
    dispatcher = app_state(app).fast_paths
    behind, reached = dispatcher.app, []

    def spy(environ: dict[str, Any], start_response: Any) -> Any:
        reached.append(environ["PATH_INFO"].encode("latin-1").decode())  # WSGI's str of bytes
        return behind(environ, start_response)

    dispatcher.app = spy
    # No cookie jars: a Cookie header is sent only where a case sets one.
    return Scene(
        app, alice, data, Client(app, use_cookies=False), Client(behind, use_cookies=False), reached
    )


def comparable(response: TestResponse) -> tuple[str, list[tuple[str, str]], bytes]:
    """Status, headers in order (Date reduced to its presence) and body."""
    headers = [(k, "<date>" if k == "Date" else v) for k, v in response.headers.to_wsgi_list()]
    return response.status, headers, response.data


def assert_same_answer(fast: TestResponse, flask: TestResponse) -> None:
    assert comparable(fast) == comparable(flask)
    if "Date" in fast.headers:  # werkzeug's format, the same second give or take the tick
        at = [parse_date(r.headers["Date"]) for r in (fast, flask)]
        assert abs((at[0] - at[1]).total_seconds()) <= 2


@dataclass(frozen=True)
class Case:
    path: str  # "{token}" is the monitor's badge token
    status: int  # of both answers
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    steps: tuple[str, ...] = ("warm",)  # before the two requests (Scene.step)
    fast: bool = True  # answered by the fast path, Flask not reached
    data: bytes | None = None
    says: bytes = b""  # in the body


BADGE = "/badge/{token}/status.svg"
CASES = {
    # Hits: every kind of badge, the page in HTML and JSON, plain and gzipped.
    "badge hit": Case(BADGE, 200, says=b">up<"),
    "badge hit, gzip asked (badges are too small to gzip)": Case(BADGE, 200, headers=GZIP),
    "uptime badge hit": Case("/badge/{token}/uptime-7d.svg", 200, says=b"uptime 7d"),
    "uptime 90d badge hit": Case("/badge/{token}/uptime-90d.svg", 200),
    "response-time badge hit": Case("/badge/{token}/response-time.svg", 200, says=b" ms"),
    "badge hit with a query string": Case(BADGE + "?style=flat", 200),
    "badge HEAD": Case(BADGE, 200, method="HEAD"),
    "badge 304": Case(BADGE, 304, headers={"If-None-Match": ETAG}),
    "badge 304, tag among others": Case(BADGE, 304, headers={"If-None-Match": f'"x", {ETAG}'}),
    "badge 304, weak tag": Case(BADGE, 304, headers={"If-None-Match": f"W/{ETAG}"}),
    "badge 304 on If-None-Match: *": Case(BADGE, 304, headers={"If-None-Match": "*"}),
    "badge HEAD 304": Case(BADGE, 304, method="HEAD", headers={"If-None-Match": ETAG}),
    "badge, another tag": Case(BADGE, 200, headers={"If-None-Match": '"stale"'}),
    "badge, If-Modified-Since alone": Case(
        BADGE, 200, headers={"If-Modified-Since": "Tue, 24 Nov 2026 08:00:00 GMT"}
    ),
    "badge, a Range (not served)": Case(BADGE, 200, headers={"Range": "bytes=0-9"}),
    "page hit": Case("/status/acme", 200, says=b"Acme"),
    "page hit gzipped": Case("/status/acme", 200, headers=GZIP),
    "page hit, gzip refused": Case("/status/acme", 200, headers={"Accept-Encoding": "gzip;q=0"}),
    "page hit, any encoding": Case("/status/acme", 200, headers={"Accept-Encoding": "*"}),
    "page HEAD gzipped": Case("/status/acme", 200, method="HEAD", headers=GZIP),
    "page 304": Case("/status/acme", 304, headers={"If-None-Match": ETAG}),
    "page 304 gzipped": Case("/status/acme", 304, headers={**GZIP, "If-None-Match": ETAG}),
    "json hit": Case("/status/acme.json", 200, says=b'"slug":"acme"'),
    "json hit gzipped": Case("/status/acme.json", 200, headers=GZIP),
    "json 304 gzipped": Case("/status/acme.json", 304, headers={**GZIP, "If-None-Match": ETAG}),
    # Misses: Flask renders (and caches) or answers 404.
    "badge miss": Case(BADGE, 200, steps=(), fast=False, says=b">up<"),
    "page miss": Case("/status/acme", 200, headers=GZIP, steps=(), fast=False),
    "unknown token": Case(f"/badge/{'A' * 32}/status.svg", 404, fast=False),
    "unknown slug": Case("/status/nope.json", 404, fast=False),
    "unknown badge kind": Case("/badge/{token}/uptime-1y.svg", 404, fast=False),
    "rotated token": Case(BADGE, 404, steps=("warm", "rotate"), fast=False),
    "badges turned off": Case(BADGE, 404, steps=("warm", "badges_off"), fast=False),
    "uptime badge, badges turned off": Case(
        "/badge/{token}/uptime-30d.svg", 404, steps=("warm", "badges_off"), fast=False
    ),
    "maintenance, miss": Case(BADGE, 200, steps=("maintenance",), fast=False, says=b"maintenance"),
    "maintenance, hit": Case(BADGE, 200, steps=("maintenance", "warm"), says=b"maintenance"),
    # Out of the ordinary: Flask answers, whatever is cached.
    "POST": Case(BADGE, 405, method="POST", fast=False),
    "OPTIONS": Case(BADGE, 200, method="OPTIONS", fast=False),
    "a cookie": Case(BADGE, 200, headers={"Cookie": "session_cookie=nope"}, fast=False),
    "a bearer": Case(BADGE, 200, headers={"Authorization": "Bearer upt_nope"}, fast=False),
    "If-Match": Case(BADGE, 200, headers={"If-Match": ETAG}, fast=False),
    "If-Match, another tag": Case(BADGE, 412, headers={"If-Match": '"stale"'}, fast=False),
    "a body": Case(BADGE, 200, data=b"x", fast=False),
    "trailing slash": Case(BADGE + "/", 404, fast=False),
    "double slash": Case("/badge//{token}/status.svg", 308, fast=False),
    "page, trailing slash": Case("/status/acme/", 404, fast=False),
    "not ASCII": Case("/status/acm\u00e9", 404, fast=False),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_fast_path_answers_as_flask_does(scene: Scene, case: Case) -> None:
    path = case.path.format(token=scene.monitor["badge_token"])
    headers = dict(case.headers)
    for step in case.steps:
        scene.step(step, path, headers)
    if any(ETAG in v for v in headers.values()):
        plain = {k: v for k, v in headers.items() if ETAG not in v}
        etag = scene.flask.get(path, headers=plain).headers["ETag"]
        headers = {k: v.replace(ETAG, etag) for k, v in headers.items()}
    scene.reached.clear()
    fast = scene.fast.open(path, method=case.method, headers=headers, data=case.data)
    assert scene.reached == ([] if case.fast else [path.split("?")[0]])
    flask = scene.flask.open(path, method=case.method, headers=headers, data=case.data)
    assert fast.status_code == case.status
    assert case.says in fast.data
    assert_same_answer(fast, flask)


def test_public_answers_are_not_rate_limited_on_either_path(scene: Scene) -> None:
    path = BADGE.format(token=scene.monitor["badge_token"])
    answers = [client.get(path) for client in (scene.flask, scene.fast) for _ in range(25)]
    assert [a.status_code for a in answers] == [200] * 50  # budget: 20/minute
    assert not any("X-RateLimit-Limit" in a.headers for a in answers)
    assert scene.reached == []  # the first (Flask's) filled the cache


def test_a_rotated_token_stops_at_once_after_many_hits(scene: Scene) -> None:
    old = BADGE.format(token=scene.monitor["badge_token"])
    for _ in range(3):
        assert scene.fast.get(old).status_code == 200
    scene.step("rotate", old, {})
    assert scene.fast.get(old).status_code == 404
    new = scene.alice.get(f"{MONITORS}/{scene.monitor['id']}").get_json()["data"]["badge_token"]
    assert scene.fast.get(BADGE.format(token=new)).status_code == 200


def test_another_process_turning_badges_off_stops_the_fast_path_within_the_ttl(
    scene: Scene, clock: Any
) -> None:
    path = BADGE.format(token=scene.monitor["badge_token"])
    assert scene.fast.get(path).status_code == 200
    Monitor.update(badges=False).where(Monitor.id == scene.monitor["id"]).execute()
    scene.reached.clear()
    assert scene.fast.get(path).status_code == 200 and scene.reached == []  # cached
    clock.advance(61)
    assert scene.fast.get(path).status_code == 404 and scene.reached == [path]


def raw_get(base: str, path: str, headers: str = "") -> bytes:
    """The bytes waitress sends for one GET of *path* (Date line blanked)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n"
        sock.sendall(request.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = [b"Date: -" if line.startswith(b"Date: ") else line for line in head.split(b"\r\n")]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def test_through_waitress_the_bytes_are_flasks(scene: Scene) -> None:
    token = scene.monitor["badge_token"]
    requests = [
        (f"/badge/{token}/status.svg", ""),
        ("/status/acme", "Accept-Encoding: gzip\r\n"),
        ("/status/acme.json", ""),
    ]
    fast_path = scene.app.wsgi_app
    with serving(scene.app, threads=2) as base:
        for path, _ in requests:
            scene.step("warm", path, {})
        scene.reached.clear()
        fast = [raw_get(base, path, headers) for path, headers in requests]
        assert scene.reached == []
        scene.app.wsgi_app = fast_path.app  # Flask alone, for the same requests
        try:
            flask = [raw_get(base, path, headers) for path, headers in requests]
        finally:
            scene.app.wsgi_app = fast_path
    assert scene.reached == [path for path, _ in requests]
    assert fast == flask
    assert all(answer.startswith(b"HTTP/1.1 200 OK\r\n") for answer in fast)
    assert b"Content-Encoding: gzip" in fast[1] and b"Server: uptime-test" in fast[0]
