"""``--json`` (local or global) prints parseable JSON, the API's data unchanged, on stdout."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli.conftest import Cli, Target, describe
from tests.notification_rows import add_notification
from uptime_server import db

# Command lines, {m} = a monitor id, {n} = a notification id.
DATA_COMMANDS = [
    "whoami",
    "refresh",
    "monitors list",
    "monitors list --all",
    "monitors add json-made http://127.0.0.1:9/",
    "monitors show {m}",
    "monitors edit {m} --retries 1",
    "monitors pause {m}",
    "monitors alerts {m}",
    "monitors alerts {m} --threshold 2",
    "monitors bulk update {m} --set retry_count=2",
    "monitors test {m}",
    "monitors history {m}",
    "monitors stats {m}",
    "notifications list",
    "notifications active",
    "notifications recent",
    "notifications show {n}",
    "notifications ack {n}",
    "notifications resolve {n}",
    "monitors rm {m} --yes",
    "logout",
]


@pytest.fixture
def ids(cli: Cli, alice: Any, clock: Any, target: Target) -> dict[str, int]:
    monitor = cli.json("monitors", "add", "api", target.route("/ok", 200, "ok"))["id"]
    with db.database.connection_context():
        note = add_notification(
            monitor, alice.user.id, clock.now(), "api is DOWN: connection refused"
        )
    return {"m": monitor, "n": note.id}


@pytest.mark.parametrize("where", ["local", "global"])
@pytest.mark.parametrize("line", DATA_COMMANDS)
def test_json_parses(cli: Cli, ids: dict[str, int], line: str, where: str) -> None:
    args = line.format(**ids).split()
    args = [*args, "--json"] if where == "local" else ["--json", *args]
    result = cli(*args)
    allowed = (0, 1) if "test" in args else (0,)  # test exits 1 for a failed check
    assert result.exit_code in allowed, describe(result)
    value = json.loads(result.stdout)
    assert isinstance(value, dict)
    assert not isinstance(value.get("error"), dict)  # data, not an error body


def test_lists_print_data_and_pagination(cli: Cli, ids: dict[str, int]) -> None:
    body = cli.json("monitors", "list")
    assert set(body) == {"data", "pagination"}
    assert body["data"][0]["id"] == ids["m"]


def test_single_objects_print_the_data_unchanged(cli: Cli, alice: Any, ids: dict[str, int]) -> None:
    via_cli = cli.json("monitors", "show", str(ids["m"]))
    via_api = alice.get(f"/api/v1/monitors/{ids['m']}").json["data"]
    assert via_cli == via_api
    assert (
        cli.json("monitors", "alerts", str(ids["m"]))
        == (alice.get(f"/api/v1/monitors/{ids['m']}/alerts").json["data"])
    )


def test_messages_stay_off_stdout(cli: Cli) -> None:
    result = cli.ok("monitors", "add", "x", "http://127.0.0.1:9/", "--json")
    json.loads(result.stdout)
    assert "Created" not in result.stdout
