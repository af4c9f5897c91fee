"""``uptime status-pages ...`` and ``uptime monitors badges``, against a live daemon."""

from __future__ import annotations

from typing import Any

import requests

from tests.cli.conftest import Cli, LiveServer


def test_status_pages_round_trip(cli: Cli, make_monitor: Any, live: LiveServer) -> None:
    a, b = make_monitor("api").id, make_monitor("db").id
    page = cli.json(
        "status-pages", "add", "acme", "Acme", "--group", f"API={a},{b}", "--show-names"
    )
    assert page["groups"] == [{"heading": "API", "monitor_ids": [a, b], "tags": [], "labels": {}}]
    assert page["show_names"] is True and page["url"].endswith("/status/acme")
    assert cli.json("status-pages", "list") == {"data": [page]}
    shown = cli.ok("status-pages", "show", "acme").stdout
    assert "Acme" in shown and "group API" in shown and f"{a}, {b}" in shown
    edited = cli.json(
        "status-pages",
        "edit",
        str(page["id"]),
        "--title",
        "Acme Inc",
        "--groups-json",
        f'[{{"heading": "DB", "monitor_ids": [{b}], "labels": {{"{b}": "Postgres"}}}}]',
    )
    assert edited["title"] == "Acme Inc" and edited["groups"][0]["labels"] == {str(b): "Postgres"}
    public = requests.get(f"{live.url}/status/acme.json", timeout=5).json()
    assert public["groups"][0]["monitors"][0]["name"] == "Postgres"
    assert "acme" in cli.ok("status-pages", "list").stdout
    cli.ok("status-pages", "delete", "acme", "--yes")
    assert cli.json("status-pages", "list") == {"data": []}


def test_status_page_errors_exit_4(cli: Cli, bob_cli: Cli) -> None:
    cli.ok("status-pages", "add", "acme", "Acme")
    taken = bob_cli("status-pages", "add", "acme", "Mine")
    assert taken.exit_code == 4 and "SLUG_TAKEN" in taken.stderr
    missing = bob_cli("status-pages", "show", "acme")
    assert missing.exit_code == 4 and "STATUS_PAGE_NOT_FOUND" in missing.stderr
    bad = cli("status-pages", "add", "x", "X", "--group", "no-ids")
    assert bad.exit_code == 2


def test_monitor_badges_print_markdown(cli: Cli, make_monitor: Any, live: LiveServer) -> None:
    mid = make_monitor("api").id
    off = cli("monitors", "badges", str(mid))
    assert off.exit_code == 0 and "Badges are off" in off.stderr and off.stdout == ""
    on = cli.json("monitors", "badges", str(mid), "--enable")
    token = on["badge_token"]
    assert on["badges"] is True and on["urls"]["status"] == f"{live.url}/badge/{token}/status.svg"
    lines = cli.ok("monitors", "badges", str(mid)).stdout.splitlines()
    assert lines[0] == f"![api status]({live.url}/badge/{token}/status.svg)"
    assert len(lines) == 6 and all(line.startswith("![api ") for line in lines)
    assert requests.get(on["urls"]["uptime 30d"], timeout=5).status_code == 200
    rotated = cli.json("monitors", "badges", str(mid), "--rotate")
    assert rotated["badge_token"] != token
    assert requests.get(on["urls"]["status"], timeout=5).status_code == 404
    off = cli.json("monitors", "badges", str(mid), "--disable")
    assert off == {"monitor_id": mid, "badges": False, "badge_token": None, "urls": {}}
    assert requests.get(rotated["urls"]["status"], timeout=5).status_code == 404
