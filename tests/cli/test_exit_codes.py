"""Exit codes: 0 ok, 1 error, 2 usage, 3 unreachable, 4 refused, 5 server error.

README.md#command-line.

Failures print one line (no traceback) unless --debug.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import HTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.cli.conftest import Cli, base_env, closed_port, describe
from tests.stub_http import StubHandler


def test_success_is_0(cli: Cli) -> None:
    assert cli("monitors", "list").exit_code == 0


def test_a_refusal_is_4_with_the_code_and_message(cli: Cli) -> None:
    result = cli("monitors", "show", "9999")
    assert result.exit_code == 4
    assert "MONITOR_NOT_FOUND: Monitor not found" in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.output


def test_a_validation_error_names_the_fields(cli: Cli) -> None:
    result = cli("monitors", "add", "x", "http://127.0.0.1:9/", "--timeout", "1")
    assert result.exit_code == 4
    assert "VALIDATION_ERROR" in result.stderr
    assert "timeout:" in result.stderr


@pytest.fixture
def broken_list(app: Flask) -> None:
    """The daemon's list endpoint fails with an unexpected exception."""

    def boom() -> Any:
        raise RuntimeError("the database caught fire")

    app.view_functions["api.monitors.list_monitors"] = boom


def test_a_server_error_is_5(cli: Cli, broken_list: None) -> None:
    result = cli("monitors", "list")
    assert result.exit_code == 5, describe(result)
    assert "HTTP 500 INTERNAL_ERROR" in result.stderr
    assert "Traceback" not in result.output
    assert "caught fire" not in result.output  # the API does not leak it either


def test_debug_adds_the_traceback_and_http_trace(cli: Cli, broken_list: None) -> None:
    result = cli("--debug", "monitors", "list")
    assert result.exit_code == 5
    assert "Traceback" in result.stderr
    assert "[http] > GET http://127.0.0.1:" in result.stderr
    assert "[http] < 500" in result.stderr


def test_debug_traces_never_show_the_session(cli: Cli, alice: Any) -> None:
    result = cli("--debug", "whoami")
    assert result.exit_code == 0
    assert "[http] < 200" in result.stderr
    assert alice.token not in result.output


class _OddServer(StubHandler):
    """A proxy that is down (502 HTML), or an API that answers nonsense (200)."""

    def do_GET(self) -> None:
        if self.path.startswith("/odd/"):
            status, ctype, body = 200, "application/json", b'{"data": [42], "pagination": {}}'
        else:
            status, ctype, body = 502, "text/html", b"<html><body>502 Bad Gateway</body></html>"
        self.reply(status, body, ctype)


@pytest.fixture
def proxy_down() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _OddServer)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_non_api_5xx_is_5(proxy_down: str, config_dir: Path) -> None:
    result = Cli({**base_env(config_dir), "UPTIME_SERVER": proxy_down})("monitors", "list")
    assert result.exit_code == 5
    assert "HTTP 502" in result.stderr


def test_an_unexpected_failure_is_1_without_a_traceback(proxy_down: str, config_dir: Path) -> None:
    cli = Cli({**base_env(config_dir), "UPTIME_SERVER": proxy_down + "/odd"})
    result = cli("monitors", "list")
    assert result.exit_code == 1, describe(result)
    assert "unexpected error" in result.stderr and "--debug" in result.stderr
    assert "Traceback" not in result.output
    result = cli("--debug", "monitors", "list")
    assert result.exit_code == 1 and "Traceback" in result.stderr


def test_an_unreachable_server_is_3(config_dir: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    result = Cli({**base_env(config_dir), "UPTIME_SERVER": url})("monitors", "list")
    assert result.exit_code == 3, describe(result)
    assert "connection refused" in result.stderr
    assert "Traceback" not in result.output


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_server_that_does_not_answer_in_time_is_3(silent_server: str, config_dir: Path) -> None:
    cli = Cli({**base_env(config_dir), "UPTIME_SERVER": silent_server})
    result = cli("--timeout", "0.3", "monitors", "list")
    assert result.exit_code == 3, describe(result)
    assert "did not answer within 0.3s" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["no-such-command"],
        ["monitors", "show", "abc"],
        ["monitors", "show", "0"],
        ["monitors", "list", "--status", "bogus"],
        ["monitors", "list", "--limit", "500"],
        ["monitors", "stats", "1", "--period", "1y"],
        ["monitors", "history", "1", "--from", "yesterday-ish"],
        ["monitors", "add", "only-a-name"],
        ["monitors", "add", "x", "http://127.0.0.1:9/", "--header", "no-colon"],
        ["notifications", "list", "--type", "sideways"],
        ["--server", "ftp://example.com", "monitors", "list"],
    ],
)
def test_usage_errors_are_2(cli: Cli, args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 2, describe(result)
    assert "Traceback" not in result.output


def test_no_arguments_shows_help(cli: Cli) -> None:
    result = cli()
    assert "monitors" in result.output and "notifications" in result.output


def test_version(cli: Cli) -> None:
    result = cli.ok("--version")
    assert result.stdout.strip() == "uptime 0.1.0"
