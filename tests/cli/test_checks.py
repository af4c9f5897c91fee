"""``uptime monitors test|history|stats`` against a live daemon checking a local target."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import fields

import pytest

from tests.cli.conftest import Cli, Target, describe
from tests.dns_server import DnsServer
from uptime_cli.client import ApiClient
from uptime_server.config import Settings


def add(cli: Cli, url: str) -> str:
    return str(cli.json("monitors", "add", "target", url, "--timeout", "5")["id"])


@pytest.mark.parametrize(
    ("code", "status", "exit_code"),
    [(200, "online", 0), (503, "offline", 1)],
    ids=["exits-0-when-the-check-passes", "exits-1-when-it-fails"],
)
def test_test(cli: Cli, target: Target, code: int, status: str, exit_code: int) -> None:
    monitor_id = add(cli, target.route(f"/{status}", code, "some body"))
    result = cli("monitors", "test", monitor_id)
    assert result.exit_code == exit_code, describe(result)
    assert status in result.stdout
    assert str(code) in result.stdout
    result = cli("monitors", "test", monitor_id, "--json")
    assert result.exit_code == exit_code, describe(result)
    data = json.loads(result.stdout)
    assert data["status"] == status and data["status_code"] == code
    assert isinstance(data["response_time"], int)
    assert (data["error"] is None) == (status == "online")


def test_test_waits_for_the_servers_deadline_plus_a_margin() -> None:
    # The server's 504 TEST_RUN_TIMEOUT must arrive before the CLI gives up, and
    # a hung server must not hold the terminal for an hour.
    [deadline] = [f.default for f in fields(Settings) if f.name == "test_run_timeout"]
    waits = ApiClient("http://127.0.0.1:9").check_timeout
    assert deadline + 30 <= waits <= 3 * deadline


def test_history_lists_the_recorded_runs(cli: Cli, target: Target) -> None:
    monitor_id = add(cli, target.route("/ok", 200, "ok"))
    cli.ok("monitors", "test", monitor_id)
    target.route("/ok", 500, "broken")
    cli("monitors", "test", monitor_id)
    body = cli.json("monitors", "history", monitor_id)
    assert [r["status"] for r in body["data"]] == ["offline", "online"]  # newest first
    assert body["meta"]["count"] == 2
    out = cli.ok("monitors", "history", monitor_id).stdout
    assert "CHECKED AT" in out and "offline" in out and "500" in out
    body = cli.json("monitors", "history", monitor_id, "--limit", "1")
    assert len(body["data"]) == 1 and body["meta"]["has_more"] is True
    early = cli.json(
        "monitors", "history", monitor_id,
        "--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z",
    )  # fmt: skip
    assert early["data"] == []


def test_stats_draws_the_series(cli: Cli, target: Target) -> None:
    monitor_id = add(cli, target.route("/ok", 200, "ok"))
    cli.ok("monitors", "test", monitor_id)
    data = cli.json("monitors", "stats", monitor_id, "--period", "24h", "--granularity", "1h")
    assert set(data["uptime"]) == {"24h", "7d", "30d"}
    assert data["period"] == "24h" and data["granularity"] == "1h"
    assert len(data["series"]) >= 24
    out = cli.ok("monitors", "stats", monitor_id).stdout
    assert "Uptime" in out and "Response" in out
    assert "█" in out  # the bars and sparklines


@pytest.fixture(scope="module")
def dns_server() -> Iterator[DnsServer]:
    """A real DNS server on 127.0.0.1 serving tests/dns_server.py's zone."""
    server = DnsServer()
    yield server
    server.stop()


def test_test_of_a_dns_monitor_shows_the_query_and_no_http_status(
    cli: Cli, dns_server: DnsServer
) -> None:
    monitor_id = str(
        cli.json(
            "monitors", "add", "mx", "example.test", "--type", "dns", "--record-type", "MX",
            "--resolver", dns_server.address, "--timeout", "5",
        )["id"]
    )  # fmt: skip
    out = cli.ok("monitors", "test", monitor_id).stdout
    assert "online" in out
    assert re.search(r"Target\s+example.test MX", out)
    assert "Status code" not in out
    data = cli.json("monitors", "test", monitor_id)  # the JSON stays the API's, null included
    assert data["status"] == "online" and data["status_code"] is None
    assert set(data) >= {"status", "response_time", "status_code", "checked_at", "error"}
    shown = cli.ok("monitors", "show", monitor_id).stdout
    assert re.search(r"Record type\s+MX", shown)
    assert "Status code" not in shown
    listed = cli.ok("monitors", "list").stdout
    # A list summary names the record type too.
    assert listed.splitlines()[1].split()[-3:] == ["dns", "example.test", "MX"], listed
