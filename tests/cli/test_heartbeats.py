"""`uptime monitors add --type heartbeat`, `rotate-ping-token`, heartbeats in show and history."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
import typer

from tests.cli.conftest import Cli
from uptime_cli.commands.options import parse_duration


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [("90s", 90), ("10m", 600), ("1h", 3600), ("2d", 172800), ("1w", 604800), ("45", 45)],
)
def test_durations(raw: str, seconds: int) -> None:
    assert parse_duration(raw) == seconds


@pytest.mark.parametrize("raw", ["", "1x", "h", "-5m", "1.5h"])
def test_bad_durations(raw: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_duration(raw)


def test_it_adds_a_heartbeat_and_prints_its_ping_url(cli: Cli, alice: Any) -> None:
    result = cli.ok(
        "monitors", "add", "backup", "--type", "heartbeat", "--period", "1h", "--grace", "10m"
    )
    ping_url = result.stdout.strip()
    assert urlsplit(ping_url).path.startswith("/ping/")
    [monitor] = alice.get("/api/v1/monitors").json["data"]
    stored = alice.get(f"/api/v1/monitors/{monitor['id']}").json["data"]
    assert (stored["type"], stored["period"], stored["grace"]) == ("heartbeat", 3600, 600)
    assert stored["ping_url"] == ping_url


def test_it_adds_a_cron_heartbeat(cli: Cli, alice: Any) -> None:
    data = cli.json(
        "monitors", "add", "nightly", "--cron", "0 3 * * *", "--timezone", "Europe/Berlin",
    )  # fmt: skip
    assert data["type"] == "heartbeat" and data["ping_url"]
    m = alice.get(f"/api/v1/monitors/{data['id']}").json["data"]
    assert (m["cron"], m["timezone"], m["grace"]) == ("0 3 * * *", "Europe/Berlin", 300)
    shown = cli.ok("monitors", "show", str(data["id"])).stdout
    assert "cron" in shown.lower() and "Europe/Berlin" in shown and "Ping URL" in shown
    assert "Next deadline" in shown


def test_a_heartbeat_takes_no_url_and_others_need_one(cli: Cli) -> None:
    result = cli("monitors", "add", "x", "http://127.0.0.1:9/", "--type", "heartbeat")
    assert result.exit_code == 2
    assert cli("monitors", "add", "x").exit_code == 2


def test_it_rotates_the_ping_token(cli: Cli, alice: Any, anon: Any) -> None:
    data = cli.json("monitors", "add", "backup", "--type", "heartbeat", "--period", "1d")
    rotated = cli.ok("monitors", "rotate-ping-token", str(data["id"])).stdout.strip()
    assert rotated != data["ping_url"]
    assert anon.get(urlsplit(data["ping_url"]).path).status_code == 404
    assert anon.get(urlsplit(rotated).path).status_code == 200
    as_json = cli.json("monitors", "rotate-ping-token", str(data["id"]))
    assert as_json["ping_url"] not in (rotated, data["ping_url"])


def test_list_and_history_render_heartbeats(cli: Cli, anon: Any) -> None:
    data = cli.json("monitors", "add", "backup", "--type", "heartbeat", "--period", "1h")
    path = urlsplit(data["ping_url"]).path
    anon.post(f"{path}/3", data=b"tar: disk full")
    listed = cli.ok("monitors", "list", "--type", "heartbeat").stdout
    assert "backup" in listed and "heartbeat" in listed
    history = cli.ok("monitors", "history", str(data["id"])).stdout
    assert "exit 3" in history and "exit code 3: tar: disk full" in history
