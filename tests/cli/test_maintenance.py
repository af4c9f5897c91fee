"""``uptime maintenance ...`` against a live daemon (docs/maintenance.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.cli.conftest import Cli, describe
from uptime_server.clock import isoformat


def test_add_list_show_edit_delete(cli: Cli, make_monitor: Any, clock: Any) -> None:
    m = make_monitor("api")
    start = clock.now() + timedelta(hours=1)
    added = cli.json(
        "maintenance",
        "add",
        "db upgrade",
        "--monitor",
        str(m.id),
        "--starts-at",
        isoformat(start),
        "--ends-at",
        isoformat(start + timedelta(hours=2)),
    )
    assert (added["title"], added["monitor_ids"], added["active"]) == ("db upgrade", [m.id], False)
    assert added["next_starts_at"] == isoformat(start)
    weekly = cli.json(
        "maintenance",
        "add",
        "sunday backups",
        "--tag",
        "db",
        "--cron",
        "0 2 * * 0",
        "--duration",
        "2h",
        "--timezone",
        "Europe/Berlin",
    )
    assert (weekly["cron"], weekly["duration"], weekly["timezone"]) == (
        "0 2 * * 0",
        7200,
        "Europe/Berlin",
    )
    assert [w["id"] for w in cli.json("maintenance", "list")["data"]] == [
        added["id"],
        weekly["id"],
    ]
    assert "sunday backups" in cli.ok("maintenance", "list").stdout
    shown = cli.ok("maintenance", "show", str(weekly["id"])).stdout
    assert "0 2 * * 0 (Europe/Berlin)" in shown
    edited = cli.json("maintenance", "edit", str(added["id"]), "--title", "pg 17")
    assert (edited["title"], edited["starts_at"]) == ("pg 17", isoformat(start))
    assert "Deleted" in cli.ok("maintenance", "delete", str(added["id"]), "--yes").stderr
    assert [w["id"] for w in cli.json("maintenance", "list")["data"]] == [weekly["id"]]


def test_start_for_a_tag_then_end(cli: Cli, make_monitor: Any, clock: Any, alice: Any) -> None:
    web = make_monitor("web", tags=["web"])
    other = make_monitor("other")
    started = cli.json("maintenance", "start", "--tag", "web", "--for", "30m")
    assert started["tags"] == ["web"] and started["active"] is True
    assert started["active_until"] == isoformat(clock.now() + timedelta(minutes=30))
    assert started["title"] == "Ad-hoc maintenance: tag web"
    listed = cli.json("monitors", "list", "--status", "maintenance")["data"]
    assert [m["id"] for m in listed] == [web.id]
    assert alice.get(f"/api/v1/monitors/{other.id}").get_json()["data"]["status"] == "pending"
    ended = cli.ok("maintenance", "end", str(started["id"]))
    assert "ended" in ended.stderr
    assert cli.json("maintenance", "show", str(started["id"]))["active"] is False
    # An existing window by id, until ended.
    again = cli.json("maintenance", "start", str(started["id"]))
    assert (again["active"], again["active_until"]) == (True, None)


def test_usage_and_api_errors(cli: Cli, make_monitor: Any) -> None:
    result = cli("maintenance", "start")
    assert result.exit_code == 2, describe(result)
    result = cli("maintenance", "show", "999")
    assert result.exit_code != 0 and "not found" in result.stderr.lower(), describe(result)
    result = cli("maintenance", "add", "x", "--monitor", "999")
    assert result.exit_code != 0 and "monitor_ids" in result.stderr, describe(result)
