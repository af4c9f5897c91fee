"""``uptime ping``: each kind of ping to its path, MONITOR as URL, id or name.

Against a receiver on 127.0.0.1 standing in for the server (docs/heartbeats.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, base_env, closed_port, describe
from tests.cli.ping_receiver import Receiver


@pytest.fixture
def ping_cli(receiver: Receiver, config_dir: Path) -> Cli:
    """Signed in to the receiver as a server; UPTIME_PING_URL unset."""
    env = {**base_env(config_dir), "UPTIME_SERVER": receiver.url, "UPTIME_SESSION": "s3cret"}
    return Cli({**env, "UPTIME_PING_URL": None})


@pytest.mark.parametrize(
    "options, path",
    [
        ([], "/ping/tok"),
        (["--start"], "/ping/tok/start"),
        (["--fail"], "/ping/tok/fail"),
        (["--exit-code", "0"], "/ping/tok/0"),
        (["--exit-code", "7"], "/ping/tok/7"),
        (["--log"], "/ping/tok/log"),
    ],
)
def test_each_kind_of_ping_goes_to_its_path(
    ping_cli: Cli, receiver: Receiver, options: list[str], path: str
) -> None:
    ping_cli.ok("ping", receiver.ping_url(), *options, "--message", "nightly run")
    [seen] = receiver.seen
    assert (seen.method, seen.path, seen.body) == ("POST", path, b"nightly run")
    assert seen.headers["User-Agent"] == "uptime-cli/0.1.0"
    assert "Cookie" not in seen.headers  # the token in the URL is the credential


def test_the_ping_url_can_come_from_the_environment(ping_cli: Cli, receiver: Receiver) -> None:
    result = ping_cli.ok("ping", "--fail", env={"UPTIME_PING_URL": receiver.ping_url("env")})
    assert receiver.paths() == ["/ping/env/fail"]
    assert "Sent the fail ping" in result.stderr


def test_message_dash_reads_stdin(ping_cli: Cli, receiver: Receiver) -> None:
    ping_cli.ok("ping", receiver.ping_url(), "--log", "-m", "-", input="disk 91% full\n")
    assert receiver.seen[0].body == b"disk 91% full\n"


def test_json_prints_the_result(ping_cli: Cli, receiver: Receiver) -> None:
    result = ping_cli.ok("ping", receiver.ping_url(), "--exit-code", "2", "--json")
    assert json.loads(result.stdout) == {
        "kind": "2",
        "ok": True,
        "status": 200,
        "attempts": 1,
        "error": None,
    }


def test_an_id_is_resolved_through_the_api_with_the_session(
    ping_cli: Cli, receiver: Receiver
) -> None:
    monitor = {"id": 3, "name": "db dump", "ping_url": receiver.ping_url("t3")}
    receiver.serve_json("/api/v1/monitors/3", {"data": monitor})
    ping_cli.ok("ping", "3", "--start")
    lookup, ping = receiver.seen
    assert lookup.path == "/api/v1/monitors/3"
    assert lookup.headers["Cookie"] == "session_cookie=s3cret"
    assert (ping.path, "Cookie" in ping.headers) == ("/ping/t3/start", False)


def test_a_name_is_resolved_to_the_monitor_of_exactly_that_name(
    ping_cli: Cli, receiver: Receiver
) -> None:
    listed = [{"id": 4, "name": "db dump (old)"}, {"id": 5, "name": "db dump"}]
    receiver.serve_json(
        "/api/v1/monitors",
        {"data": listed, "pagination": {"page": 1, "limit": 100, "total": 2, "pages": 1}},
    )
    monitor = {"id": 5, "name": "db dump", "ping_url": receiver.ping_url("t5")}
    receiver.serve_json("/api/v1/monitors/5", {"data": monitor})
    ping_cli.ok("ping", "db dump")
    assert receiver.paths() == [
        "/api/v1/monitors?page=1&limit=100&search=db+dump",
        "/api/v1/monitors/5",
        "/ping/t5",
    ]


def test_an_unknown_name_is_4(ping_cli: Cli, receiver: Receiver) -> None:
    empty = {"data": [], "pagination": {"page": 1, "limit": 100, "total": 0, "pages": 0}}
    receiver.serve_json("/api/v1/monitors", empty)
    result = ping_cli("ping", "nightly")
    assert result.exit_code == 4, describe(result)
    assert "you have no monitor named 'nightly'" in result.stderr
    assert receiver.pings() == []


def test_a_monitor_without_a_ping_url_is_4(ping_cli: Cli, receiver: Receiver) -> None:
    receiver.serve_json("/api/v1/monitors/8", {"data": {"id": 8, "name": "site", "type": "http"}})
    result = ping_cli("ping", "8")
    assert result.exit_code == 4, describe(result)
    assert "only heartbeat monitors take pings" in result.stderr


def test_an_unknown_token_is_4_after_one_attempt(ping_cli: Cli, receiver: Receiver) -> None:
    receiver.answer("/ping/tok", 404)
    result = ping_cli("ping", receiver.ping_url(), "--json")
    assert result.exit_code == 4, describe(result)
    assert json.loads(result.stdout)["attempts"] == 1
    assert receiver.paths() == ["/ping/tok"]


def test_a_server_error_is_5_after_the_retries(ping_cli: Cli, receiver: Receiver) -> None:
    receiver.answer("/ping/tok", 502)
    result = ping_cli("ping", receiver.ping_url(), "--ping-retries", "1")
    assert result.exit_code == 5, describe(result)
    assert receiver.paths() == ["/ping/tok", "/ping/tok"]
    assert "HTTP 502 Bad Gateway" in result.stderr


def test_a_server_that_is_down_is_3(ping_cli: Cli) -> None:
    url = f"http://127.0.0.1:{closed_port()}/ping/tok"
    result = ping_cli("ping", url, "--ping-retries", "0", "--json")
    assert result.exit_code == 3, describe(result)
    assert json.loads(result.stdout) == {
        "kind": "success",
        "ok": False,
        "status": None,
        "attempts": 1,
        "error": "connection refused",
    }


@pytest.mark.parametrize(
    "args",
    [
        ["ping"],  # no MONITOR, no UPTIME_PING_URL
        ["ping", "http://127.0.0.1:9/ping/x", "--start", "--fail"],
        ["ping", "http://127.0.0.1:9/ping/x", "--exit-code", "256"],
        ["ping", "http://127.0.0.1:9/not-a-ping-url"],
    ],
)
def test_usage_errors_are_2(ping_cli: Cli, receiver: Receiver, args: list[str]) -> None:
    result = ping_cli(*args)
    assert result.exit_code == 2, describe(result)
    assert receiver.seen == []
