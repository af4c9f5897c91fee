"""``uptime channels ...`` and ``uptime monitors alerts --channel`` against a live daemon."""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Cli, closed_port, describe
from tests.notification_rows import add_notification
from tests.notify.receivers import Receiver, serve
from uptime_server import db
from uptime_server.models import Outbox

SECRET = "whsec-0123456789abcdef"


def test_add_list_show_edit_delete(cli: Cli) -> None:
    added = cli.json(
        "channels",
        "add",
        "ops-hook",
        "--type",
        "webhook",
        "--url",
        "https://hooks.example.com/in/t0ken-abcd",
        "--method",
        "put",
        "--header",
        "X-Team: ops",
        "--secret",
        SECRET,
    )
    assert added["config"] == {
        "url": "****abcd",
        "method": "PUT",
        "headers": {"X-Team": "****"},
        "secret": "****cdef",
    }
    cli.ok("channels", "add", "mail", "--type", "email", "--recipient", "ops@example.com")
    listed = cli.json("channels", "list")["data"]
    assert [c["name"] for c in listed] == ["ops-hook", "mail"]
    table = cli.ok("channels", "list").stdout
    assert "ops-hook" in table and "t0ken" not in table

    # By name or by id; an edit without a secret keeps it.
    assert cli.json("channels", "show", "ops-hook")["id"] == added["id"]
    edited = cli.json("channels", "edit", str(added["id"]), "--name", "hook", "--method", "POST")
    assert edited["name"] == "hook" and edited["config"]["secret"] == "****cdef"
    shown = cli.ok("channels", "show", "hook").stdout
    assert "hook" in shown and "ops" not in shown  # a header's value is a secret too

    # Pointed elsewhere, a channel takes its secrets only when they are sent again.
    moved = ("channels", "edit", "hook", "--url", "https://elsewhere.example.com/in/n3w-url")
    refused = cli(*moved)
    assert refused.exit_code == 4, describe(refused)
    assert "config.secret" in refused.stderr and "config.headers" in refused.stderr
    again = cli.json(*moved, "--secret", "new-secret-0123", "--header", "X-Team: ops")
    assert again["config"]["url"] == "****-url" and again["config"]["secret"] == "****0123"

    result = cli.ok("channels", "delete", "hook", "--yes")
    assert "Deleted channel" in result.stderr
    assert [c["name"] for c in cli.json("channels", "list")["data"]] == ["mail"]


def test_an_option_of_another_type_is_a_usage_error(cli: Cli) -> None:
    result = cli("channels", "add", "x", "--type", "email", "--routing-key", "abc")
    assert result.exit_code == 2, describe(result)
    assert "--routing-key" in result.stderr


def test_an_unknown_channel_name_is_an_error(cli: Cli) -> None:
    result = cli("channels", "show", "nope")
    assert result.exit_code == 1 and "no channel named 'nope'" in result.stderr


def test_the_api_refusal_exits_4(cli: Cli) -> None:
    result = cli("channels", "add", "x", "--type", "slack", "--url", "http://not-https.example/")
    assert result.exit_code == 4, describe(result)
    assert "config.webhook_url" in result.stderr


def test_test_exits_0_when_accepted_and_1_when_not(cli: Cli) -> None:
    with serve(Receiver(secret=SECRET)) as hook:
        cli.ok(
            "channels", "add", "good", "--type", "webhook", "--url", hook.url, "--secret", SECRET
        )
        result = cli.ok("channels", "test", "good")
        assert "accepted" in result.stderr
        assert len(hook.accepted) == 1
    cli.ok(
        "channels",
        "add",
        "pd",
        "--type",
        "pagerduty",
        "--routing-key",
        "k" * 20,
        "--events-url",
        f"http://127.0.0.1:{closed_port()}/",
    )
    result = cli("channels", "test", "pd")
    assert result.exit_code == 1, describe(result)
    assert "connection refused" in result.stderr
    data = cli("channels", "test", "pd", "--json")
    assert data.exit_code == 1 and '"ok": false' in data.stdout


def test_monitors_alerts_takes_channels_by_name(cli: Cli, bob_cli: Cli) -> None:
    monitor = cli.json("monitors", "add", "api", "http://127.0.0.1:9/api")["id"]
    a = cli.json("channels", "add", "a", "--type", "email", "--recipient", "a@example.com")
    b = cli.json("channels", "add", "b", "--type", "apprise", "--url", "ntfys://ops-alerts")
    alerts = cli.json("monitors", "alerts", str(monitor), "--channel", "b", "--channel", "a")
    assert alerts["channel_ids"] == [b["id"], a["id"]]
    assert "Channels" in cli.ok("monitors", "alerts", str(monitor)).stdout
    assert cli.json("channels", "show", "a")["monitor_ids"] == [monitor]
    cleared = cli.json("monitors", "alerts", str(monitor), "--no-channels")
    assert cleared["channel_ids"] == []
    # Bob does not see Alice's channels by name, nor by id.
    assert bob_cli("channels", "show", "a").exit_code == 1
    assert bob_cli("channels", "show", str(a["id"])).exit_code == 1


def test_notifications_show_lists_deliveries(cli: Cli, alice: Any, clock: Any) -> None:
    monitor = cli.json("monitors", "add", "api", "http://127.0.0.1:9/api")["id"]
    channel = cli.json("channels", "add", "ops", "--type", "apprise", "--url", "ntfys://ops")
    with db.database.connection_context():
        note = add_notification(monitor, alice.user.id, clock.now(), "api is DOWN")
        Outbox.create(
            notification=note,
            channel="apprise",
            channel_id=channel["id"],
            message_id="<m1@example.com>",
            next_attempt_at=clock.now(),
            created_at=clock.now(),
            attempts=2,
            last_error="apprise ntfys: not delivered",
        )
    shown = cli.json("notifications", "show", str(note.id))
    assert shown["deliveries"][0]["channel_name"] == "ops"
    text = cli.ok("notifications", "show", str(note.id)).stdout
    assert "Deliveries" in text and "not delivered" in text
