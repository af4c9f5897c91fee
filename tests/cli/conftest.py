"""CLI fixtures: a live daemon on 127.0.0.1, a runner, local HTTP targets.

The daemon is the real app (``create_app`` with the test clock and a real
database) served by waitress in a thread on a port the OS picks; commands
run through Typer's CliRunner against it, with a config dir of their own.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from typer.testing import CliRunner, Result

from tests.cli.ping_receiver import Receiver
from tests.live_server import serving
from tests.stub_http import StubHandler
from uptime_cli.main import app as cli_app
from uptime_server import db


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """CLI tests are about the command line: SQLite unless a test asks for more."""
    return request.param


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """The daemon's socket, bound first: its URL is part of the daemon's settings."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock
    finally:
        sock.close()


@pytest.fixture
def base_url(listener: socket.socket) -> str:
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


@dataclass
class LiveServer:
    app: Flask
    url: str


@pytest.fixture
def live(app: Flask) -> Iterator[LiveServer]:
    with serving(app) as url:
        yield LiveServer(app, url)


@pytest.fixture
def restore_binding() -> Iterator[None]:
    """``login --local`` binds the database proxy itself: put the test's back after."""
    before = db.database.obj
    try:
        yield
    finally:
        mine = db.database.obj
        if mine is not before:
            if not mine.is_closed():
                mine.close()
            db.database.initialize(before)


@dataclass
class Cli:
    """Runs ``uptime`` in-process with a fixed environment."""

    env: dict[str, str | None]
    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str | None] | None = None
    ) -> Result:
        merged = {**self.env, **(env or {})}
        return self.runner.invoke(cli_app, list(args), input=input, env=merged)

    def ok(self, *args: str, **kwargs: Any) -> Result:
        result = self(*args, **kwargs)
        assert result.exit_code == 0, describe(result)
        return result

    def json(self, *args: str, **kwargs: Any) -> Any:
        result = self.ok(*args, "--json", **kwargs)
        return json.loads(result.stdout)


def describe(result: Result) -> str:
    return f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


def base_env(config_dir: Path) -> dict[str, str | None]:
    """No setting leaks in from the developer's shell; output wide enough to read."""
    return {
        "UPTIME_CONFIG_DIR": str(config_dir),
        "UPTIME_SERVER": None,
        "UPTIME_SESSION": None,
        "UPTIME_TOKEN": None,
        "UPTIME_TEAM": None,
        "UPTIME_TIMEOUT": None,
        "XDG_CONFIG_HOME": None,
        "DISPLAY": None,
        "WAYLAND_DISPLAY": None,
        "BROWSER": None,
        "COLUMNS": "200",
    }


@pytest.fixture
def anon_cli(live: LiveServer, config_dir: Path) -> Cli:
    return Cli({**base_env(config_dir), "UPTIME_SERVER": live.url})


@pytest.fixture
def cli(live: LiveServer, config_dir: Path, alice: Any) -> Cli:
    """Alice, signed in through UPTIME_SESSION."""
    return Cli({**base_env(config_dir), "UPTIME_SERVER": live.url, "UPTIME_SESSION": alice.token})


@pytest.fixture
def bob_cli(live: LiveServer, tmp_path: Path, bob: Any) -> Cli:
    env = base_env(tmp_path / "bob-config")
    return Cli({**env, "UPTIME_SERVER": live.url, "UPTIME_SESSION": bob.token})


# -- local HTTP targets ----------------------------------------------------------


class _TargetHandler(StubHandler):
    routes: dict[str, tuple[int, str, str]] = {}

    def do_GET(self) -> None:
        status, ctype, body = self.server.routes.get(  # type: ignore[attr-defined]
            self.path, (404, "text/plain", "not found")
        )
        self.reply(status, body.encode(), ctype)

    do_POST = do_GET


@dataclass
class Target:
    """A tiny HTTP server on 127.0.0.1 whose answers a test sets per path."""

    server: ThreadingHTTPServer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(self, path: str, status: int, body: str = "", ctype: str = "text/plain") -> str:
        self.server.routes[path] = (status, ctype, body)  # type: ignore[attr-defined]
        return self.url + path


@pytest.fixture
def target() -> Iterator[Target]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TargetHandler)
    server.routes = {}  # type: ignore[attr-defined]
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield Target(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A stand-in for the ping endpoints (and a monitor's API document) on 127.0.0.1."""
    with Receiver().running() as running:
        yield running
