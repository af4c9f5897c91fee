"""The ping route (fast_paths/pings) against what Flask answers for a route of its shape.

The route has no Flask view any more. So each test gives Flask alone (what
the fast paths wrap) a reference route of the ping's shape, registered for
the test only, and sends the same request to both:

- what the router answers (405 with ``Allow``, OPTIONS, the 308 of merged
  slashes, the 413 of a declared body over the limit, which Flask gives
  before it routes, and Flask's own 404 for a path that names no token):
  status, headers in order and body, byte for byte (``Allow`` as a set:
  werkzeug lists it in the order of a set);
- each error of a ping (unknown token or kind, rate limits, a broken limiter
  store, a ping not recorded): the same ``ApiError`` raised in the reference
  view and written by Flask's error handler. Status and body are compared
  byte for byte, the headers as a set: the ping path sends them in the order
  it always has (``Content-Length`` first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from werkzeug.test import Client, TestResponse

from tests.api.shapes import sqlite_only
from tests.heartbeats.conftest import make_heartbeat, ping_path
from uptime_server.engine import ping_sink as ping_service
from uptime_server.errors import ApiError
from uptime_server.fast_paths.pings import PingLimit
from uptime_server.wsgi.context import app_state
from uptime_server.wsgi.types import MAX_REQUEST_BODY

pytestmark = sqlite_only

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After")


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_PING_RATE_LIMIT": "3/minute"}


@dataclass
class Scene:
    app: Any
    fast: Client  # the app as waitress calls it: the fast paths, then Flask
    flask: Client  # Flask alone, with the reference route
    reached: list[str]  # paths the fast paths handed to Flask
    raises: list[ApiError]  # what the reference view raises next

    def both(self, method: str, path: str, **kw: Any) -> tuple[TestResponse, TestResponse]:
        self.reached.clear()
        fast = self.fast.open(path, method=method, **kw)
        flask = self.flask.open(path, method=method, **kw)
        return fast, flask


@pytest.fixture
def scene(app: Any) -> Scene:
    raises: list[ApiError] = []

    def reference(token: str, kind: str | None = None) -> Any:
        raise raises[-1] if raises else AssertionError("no error to raise")

    # As the ping views were: not counted by the app's limiter.
    view = app_state(app).limiter.exempt(reference)
    app.add_url_rule("/ping/<token>", "reference", view, methods=["GET", "POST"])
    app.add_url_rule("/ping/<token>/<kind>", "reference_kind", view, methods=["GET", "POST"])
    fast_paths = app_state(app).fast_paths
    behind, reached = fast_paths.app, []

    def spy(environ: dict[str, Any], start_response: Any) -> Any:
        reached.append(environ["PATH_INFO"])
        return behind(environ, start_response)

    fast_paths.app = spy
    return Scene(app, Client(app), Client(behind), reached, raises)


def in_order(response: TestResponse) -> tuple[str, list[tuple[str, str]], bytes]:
    headers = [
        (k, ", ".join(sorted(v.split(", "))) if k == "Allow" else v)
        for k, v in response.headers.to_wsgi_list()
    ]
    return response.status, headers, response.data


TWO_MIB = {"CONTENT_LENGTH": str(2 * MAX_REQUEST_BODY)}
ROUTER_CASES = {
    "PUT": ("PUT", "/ping/tok", {}, 405),
    "DELETE with a kind": ("DELETE", "/ping/tok/start", {}, 405),
    "PATCH, a token of other letters": ("PATCH", "/ping/%C3%A9t%FF", {}, 405),
    "OPTIONS": ("OPTIONS", "/ping/tok", {}, 200),
    "OPTIONS with a kind": ("OPTIONS", "/ping/tok/fail", {}, 200),
    "merged slashes": ("GET", "/ping//tok", {}, 308),
    "merged slashes, a kind, a query": ("POST", "/ping/tok//start?x=1", {}, 308),
    "merged slashes, HEAD": ("HEAD", "/ping//tok", {}, 308),
    "merged slashes, PUT": ("PUT", "/ping//tok", {}, 405),
    "declared body over the limit": ("POST", "/ping/tok", {"environ_overrides": TWO_MIB}, 413),
    "declared body over the limit, PUT": ("PUT", "/ping/tok", {"environ_overrides": TWO_MIB}, 413),
    "no token": ("GET", "/ping/", {}, 404),
    "too many parts": ("GET", "/ping/a/b/c", {}, 404),
    "an empty kind": ("POST", "/ping/a/", {}, 404),
}


@pytest.mark.parametrize("case", ROUTER_CASES.values(), ids=ROUTER_CASES.keys())
def test_what_the_router_answers_is_flasks(scene: Scene, case: Any) -> None:
    method, path, kw, status = case
    fast, flask = scene.both(method, path, data=b"x" if "environ_overrides" in kw else None, **kw)
    assert fast.status_code == status
    assert in_order(fast) == in_order(flask)
    # Flask is reached only for a path that names no token (its own 404).
    assert scene.reached == ([path] if status == 404 else [])


def assert_same_error(fast: TestResponse, flask: TestResponse) -> None:
    assert (fast.status, fast.data) == (flask.status, flask.data)
    assert sorted(fast.headers.to_wsgi_list()) == sorted(flask.headers.to_wsgi_list())


def raise_as_sent(scene: Scene, fast: TestResponse) -> None:
    """The reference view raises the error the ping path sent, with its limit headers."""
    body = fast.get_json()["error"]
    headers = {name: fast.headers[name] for name in RATE_HEADERS if name in fast.headers}
    scene.raises.append(ApiError(body["code"], body["message"], headers=headers))


@pytest.mark.parametrize(
    "path",
    ["/ping/unknown-token", "/ping/unknown-token/start", "/ping/" + "x" * 65, "/ping/{token}/256"],
)
def test_a_ping_error_is_the_error_handlers(scene: Scene, alice: Any, path: str) -> None:
    path = path.format(token=ping_path(make_heartbeat(alice)).rsplit("/", 1)[1])
    scene.reached.clear()
    fast = scene.fast.get(path)
    assert fast.status_code == 404 and scene.reached == []
    raise_as_sent(scene, fast)
    assert_same_error(fast, scene.flask.get(path))


def test_over_the_limit_is_the_error_handlers_429(scene: Scene, alice: Any) -> None:
    path = ping_path(make_heartbeat(alice))
    assert [scene.fast.post(path).status_code for _ in range(3)] == [200] * 3
    fast = scene.fast.post(path)
    assert fast.status_code == 429 and "Retry-After" in fast.headers
    raise_as_sent(scene, fast)
    assert_same_error(fast, scene.flask.post(path))


def test_a_broken_limiter_store_is_the_error_handlers_500(scene: Scene, alice: Any) -> None:
    class Unreachable:
        def hit(self, *_args: Any) -> bool:
            raise ConnectionError("storage down")

        test = hit

    path = ping_path(make_heartbeat(alice))
    app_state(scene.app).fast_paths.paths["ping"].limit = PingLimit(
        Unreachable(), "60/minute", None
    )
    fast = scene.fast.get(path)
    assert fast.status_code == 500
    raise_as_sent(scene, fast)
    assert_same_error(fast, scene.flask.get(path))


def test_a_ping_not_recorded_is_the_error_handlers_503(scene: Scene, alice: Any) -> None:
    class Refusing:
        def record(self, _ping: Any) -> str:
            raise ping_service.PingNotRecorded("the writer is down")

    path = ping_path(make_heartbeat(alice), "fail")
    app_state(scene.app).services["ping_sink"] = Refusing()
    fast = scene.fast.post(path, data=b"boom")
    assert fast.status_code == 503 and fast.headers["Retry-After"] == "1"
    raise_as_sent(scene, fast)
    assert_same_error(fast, scene.flask.post(path, data=b"boom"))


def test_a_ping_is_the_spec_answer(scene: Scene, alice: Any) -> None:
    path = ping_path(make_heartbeat(alice))
    for method in ("GET", "POST", "HEAD"):
        scene.reached.clear()
        response = scene.fast.open(path, method=method)
        assert scene.reached == []
        assert response.status == "200 OK"
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert response.headers["Content-Length"] == "3"
        assert response.data == (b"" if method == "HEAD" else b"OK\n")
