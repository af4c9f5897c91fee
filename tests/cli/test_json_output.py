"""``--json`` (local or global) prints parseable JSON, the API's data unchanged, on stdout."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.cli.conftest import Cli, LiveServer, Target, describe
from uptime_server import db as dbmod
from uptime_server.models import Notification

# (endpoint it needs, command line with {m} = a monitor id, {n} = a notification id)
DATA_COMMANDS = [
    (None, "whoami"),
    (None, "refresh"),
    (None, "monitors list"),
    (None, "monitors list --all"),
    (None, "monitors add json-made http://127.0.0.1:9/"),
    (None, "monitors show {m}"),
    (None, "monitors edit {m} --retries 1"),
    (None, "monitors pause {m}"),
    (None, "monitors alerts {m}"),
    (None, "monitors alerts {m} --threshold 2"),
    (None, "monitors bulk update {m} --set retry_count=2"),
    ("POST /api/v1/monitors/<int:monitor_id>/test", "monitors test {m}"),
    ("GET /api/v1/monitors/<int:monitor_id>/history", "monitors history {m}"),
    ("GET /api/v1/monitors/<int:monitor_id>/stats", "monitors stats {m}"),
    ("GET /api/v1/notifications", "notifications list"),
    ("GET /api/v1/notifications/active", "notifications active"),
    ("GET /api/v1/notifications/recent", "notifications recent"),
    ("GET /api/v1/notifications/<int:notification_id>", "notifications show {n}"),
    ("POST /api/v1/notifications/<int:notification_id>/acknowledge", "notifications ack {n}"),
    ("POST /api/v1/notifications/<int:notification_id>/resolve", "notifications resolve {n}"),
    (None, "monitors rm {m} --yes"),
    (None, "logout"),
]


@pytest.fixture
def ids(cli: Cli, alice: Any, clock: Any, target: Target) -> dict[str, int]:
    monitor = cli.json("monitors", "add", "api", target.route("/ok", 200, "ok"))["id"]
    with dbmod.database.connection_context():
        note = Notification.create(
            monitor=monitor,
            user=alice.user.id,
            type="downtime",
            message="api is DOWN: connection refused",
            status="active",
            started_at=clock.now(),
            created_at=clock.now(),
        )
    return {"m": monitor, "n": note.id}


@pytest.mark.parametrize("where", ["local", "global"])
@pytest.mark.parametrize("needs, line", DATA_COMMANDS, ids=[c for _, c in DATA_COMMANDS])
def test_json_parses(
    cli: Cli, live: LiveServer, ids: dict[str, int], needs: str | None, line: str, where: str
) -> None:
    if needs:
        live.require(*needs.split(" ", 1))
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
