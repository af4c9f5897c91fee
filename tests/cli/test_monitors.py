"""``uptime monitors list|add|show|edit|rm|pause|resume|alerts|bulk`` against a live daemon."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.cli.conftest import Cli, describe
from uptime_server.models import Monitor


def add(cli: Cli, name: str, url: str = "http://127.0.0.1:9/health", *opts: str) -> int:
    return int(cli.json("monitors", "add", name, url, *opts)["id"])


def test_it_adds_a_monitor_and_prints_its_id(cli: Cli, alice: Any) -> None:
    result = cli.ok("monitors", "add", "api", "http://127.0.0.1:9/health")
    monitor_id = int(result.stdout.strip())
    assert "Created monitor" in result.stderr
    stored = alice.get(f"/api/v1/monitors/{monitor_id}").json["data"]
    assert stored["name"] == "api"
    assert stored["type"] == "http"
    assert stored["expected_status"][0] == 200  # the server's default, nothing sent


def test_it_sends_every_add_option(cli: Cli, alice: Any) -> None:
    data = cli.json(
        "monitors", "add", "full", "https://127.0.0.1:9/x",
        "--method", "post", "--expect-status", "200", "--expect-status", "204",
        "--timeout", "10", "--interval", "30", "--retries", "2",
        "--header", "X-Token: abc", "--header", "Accept: application/json",
        "--body", '{"ping": 1}', "--expect-content", "ok", "--exclude-content", "error",
        "--json-path", "$.status", "--json-value", "up",
        "--no-follow-redirects", "--no-verify-ssl", "--location", "local",
        "--degraded-ms", "1500",
    )  # fmt: skip
    assert data["status"] == "pending"
    assert data["type"] == "https"  # from the URL's scheme
    m = alice.get(f"/api/v1/monitors/{data['id']}").json["data"]
    assert m["method"] == "POST"
    assert m["expected_status"] == [200, 204]
    assert (m["timeout"], m["check_interval"], m["retry_count"]) == (10, 30, 2)
    assert m["headers"] == {"X-Token": "abc", "Accept": "application/json"}
    assert m["body"] == '{"ping": 1}'
    assert (m["expected_content"], m["excluded_content"]) == ("ok", "error")
    assert (m["json_path"], m["expected_json_value"]) == ("$.status", "up")
    assert m["follow_redirects"] is False and m["verify_ssl"] is False
    assert m["locations"] == ["local"]
    assert m["degraded_response_time"] == 1500


def test_it_adds_a_tcp_monitor_with_its_options(cli: Cli, alice: Any) -> None:
    data = cli.json(
        "monitors", "add", "redis", "tcp://127.0.0.1:6379",
        "--tls", "--no-verify-ssl", "--send", "PING\\r\\n", "--expect", "+PONG",
    )  # fmt: skip
    assert data["type"] == "tcp"  # from the URL's scheme
    m = alice.get(f"/api/v1/monitors/{data['id']}").json["data"]
    assert (m["tls"], m["verify_ssl"], m["send"], m["expect"]) == (
        True,
        False,
        "PING\\r\\n",
        "+PONG",
    )
    assert m["checks_supported"] is True
    cli.ok("monitors", "edit", str(data["id"]), "--no-tls")
    assert alice.get(f"/api/v1/monitors/{data['id']}").json["data"]["tls"] is False
    listed = cli.json("monitors", "list", "--type", "tcp")
    assert [row["id"] for row in listed["data"]] == [data["id"]]


def test_a_tcp_or_udp_target_may_be_host_port(cli: Cli, alice: Any) -> None:
    data = cli.json("monitors", "add", "db", "127.0.0.1:5432", "--type", "tcp")
    assert (data["type"], data["url"]) == ("tcp", "tcp://127.0.0.1:5432")
    data = cli.json("monitors", "add", "snmp", "[::1]:161", "--type", "udp")
    assert (data["type"], data["url"]) == ("udp", "udp://[::1]:161")
    edited = cli.json("monitors", "edit", str(data["id"]), "--url", "127.0.0.1:162")
    assert edited["url"] == "udp://127.0.0.1:162"
    refused = cli("monitors", "add", "db2", "127.0.0.1", "--type", "tcp")
    assert refused.exit_code == 4, describe(refused)
    assert "the port is missing" in refused.stderr


def test_it_adds_a_dns_monitor_with_its_options(cli: Cli, alice: Any) -> None:
    # ping and dns were stored but not checked before issue 12; both are checked now.
    data = cli.json(
        "monitors", "add", "resolver", "example.test", "--type", "dns",
        "--record-type", "MX", "--resolver", "127.0.0.1:5353", "--expected-rcode", "noerror",
        "--expected-value", "10 mail.example.test", "--expected-value", "20 backup.example.test",
    )  # fmt: skip
    assert (data["type"], data["url"]) == ("dns", "dns://example.test")
    m = alice.get(f"/api/v1/monitors/{data['id']}").json["data"]
    assert (m["record_type"], m["resolver"], m["expected_rcode"]) == (
        "MX",
        "127.0.0.1:5353",
        "NOERROR",
    )
    assert m["expected_values"] == ["10 mail.example.test", "20 backup.example.test"]
    assert m["checks_supported"] is True
    shown = cli.ok("monitors", "show", str(data["id"])).stdout
    assert "Record type" in shown and "127.0.0.1:5353" in shown
    assert "Echoes" not in shown  # ping's field, not shown for dns


def test_it_adds_a_ping_monitor_with_its_options(cli: Cli, alice: Any) -> None:
    data = cli.json(
        "monitors", "add", "gw", "127.0.0.1", "--type", "ping",
        "--count", "5", "--max-packet-loss", "20",
    )  # fmt: skip
    m = alice.get(f"/api/v1/monitors/{data['id']}").json["data"]
    assert (m["url"], m["count"], m["max_packet_loss"]) == ("ping://127.0.0.1", 5, 20.0)


def test_show_gives_the_defaults_dns_and_ping_monitors_are_checked_with(cli: Cli) -> None:
    dns = str(add(cli, "resolver", "example.test", "--type", "dns"))
    ping = str(add(cli, "gw", "127.0.0.1", "--type", "ping"))
    shown = cli.json("monitors", "show", dns)
    assert shown["expected_rcode"] == "NOERROR"
    assert re.search(r"Expected rcode\s+NOERROR", cli.ok("monitors", "show", dns).stdout)
    shown = cli.json("monitors", "show", ping)
    assert (shown["count"], shown["max_packet_loss"]) == (3, 0)
    text = cli.ok("monitors", "show", ping).stdout
    assert re.search(r"Echoes\s+3\b", text) and re.search(r"Max packet loss \(%\)\s+0", text)


def test_it_lists_monitors_as_a_table(cli: Cli) -> None:
    add(cli, "alpha", "http://127.0.0.1:9/a")
    add(cli, "beta", "http://127.0.0.1:9/b")
    result = cli.ok("monitors", "list")
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["ID", "NAME", "STATUS", "UPTIME"]
    assert "RESPONSE" in lines[0]
    assert [line.split()[1] for line in lines[1:]] == ["alpha", "beta"]
    assert all("pending" in line for line in lines[1:])
    assert "2 shown of 2" in result.stderr


def test_the_list_shows_each_types_target_and_http_status(cli: Cli) -> None:
    web = add(cli, "web", "http://127.0.0.1:9/a")
    add(cli, "mx", "example.test", "--type", "dns", "--record-type", "MX")
    add(cli, "gw", "127.0.0.1", "--type", "ping")
    add(cli, "ns", "example.test", "--type", "dns")
    Monitor.update(status_code=503).where(Monitor.id == web).execute()
    text = cli.ok("monitors", "list").stdout
    header, *rows = text.splitlines()
    assert header.split()[-2:] == ["TYPE", "TARGET"]
    start = header.index("CODE")
    assert [row[start : start + 4].strip() for row in rows] == ["503", "—", "—", "—"]
    assert [row.split()[-3:] for row in rows] == [
        ["—", "http", "http://127.0.0.1:9/a"],  # — : never checked
        ["dns", "example.test", "MX"],
        ["—", "ping", "127.0.0.1"],
        ["dns", "example.test", "A"],  # a dns summary names its record type
    ]


def test_it_filters_and_pages(cli: Cli) -> None:
    for i in range(5):
        add(cli, f"svc-{i}", f"http://127.0.0.1:9/{i}")
    add(cli, "other", "https://127.0.0.1:9/other")
    body = cli.json("monitors", "list", "--search", "SVC", "--limit", "2", "--page", "2")
    assert [m["name"] for m in body["data"]] == ["svc-2", "svc-3"]
    assert body["pagination"] == {"page": 2, "limit": 2, "total": 5, "pages": 3}
    body = cli.json("monitors", "list", "--type", "https")
    assert [m["name"] for m in body["data"]] == ["other"]
    body = cli.json("monitors", "list", "--status", "online")
    assert body["data"] == [] and body["pagination"]["total"] == 0


def test_all_pages_through_everything(cli: Cli) -> None:
    ids = [add(cli, f"m{i}") for i in range(7)]
    body = cli.json("monitors", "list", "--all", "--limit", "3")
    assert [m["id"] for m in body["data"]] == ids
    assert body["pagination"]["total"] == 7
    table = cli.ok("monitors", "list", "--all", "--limit", "3").stdout
    assert len(table.splitlines()) == 1 + 7


def test_an_empty_list_says_so_on_stderr(cli: Cli) -> None:
    result = cli.ok("monitors", "list")
    assert result.stdout == ""
    assert "No monitors yet" in result.stderr
    add(cli, "one")
    assert "No monitors match" in cli.ok("monitors", "list", "--search", "zzz").stderr
    assert "No monitors on page 3 (there are 1)" in cli.ok("monitors", "list", "--page", "3").stderr


def test_show_prints_the_monitor_and_its_alert_settings(cli: Cli) -> None:
    monitor_id = add(cli, "api", "http://127.0.0.1:9/health", "--header", "X-A: b")
    out = cli.ok("monitors", "show", str(monitor_id)).stdout
    assert f"Monitor {monitor_id}: api" in out
    assert "http://127.0.0.1:9/health" in out
    assert "X-A: b" in out
    assert "Alert settings" in out
    assert "alice@example.com" in out  # default recipient: the owner
    data = cli.json("monitors", "show", str(monitor_id))
    assert data["id"] == monitor_id and data["headers"] == {"X-A": "b"}


def test_show_prints_the_fields_of_the_monitors_type(cli: Cli) -> None:
    monitor_id = add(cli, "redis", "tcp://127.0.0.1:6379", "--expect", "+PONG")
    out = cli.ok("monitors", "show", str(monitor_id)).stdout
    assert "Expect" in out and "+PONG" in out
    assert "Method" not in out and "Query name" not in out
    http = cli.ok("monitors", "show", str(add(cli, "api"))).stdout
    labels = [re.split(r"\s{2,}", line.strip())[0] for line in http.splitlines()]
    assert "Method" in labels and "TLS" not in labels and "Expect" not in labels


def test_edit_sends_only_the_given_options(cli: Cli, alice: Any) -> None:
    monitor_id = add(cli, "api", "http://127.0.0.1:9/a", "--timeout", "20", "--header", "A: 1")
    data = cli.json("monitors", "edit", str(monitor_id), "--name", "renamed", "--retries", "3")
    assert data["name"] == "renamed" and data["retry_count"] == 3
    assert data["timeout"] == 20 and data["headers"] == {"A": "1"}  # untouched
    data = cli.json(
        "monitors", "edit", str(monitor_id), "--url", "http://127.0.0.1:9/b",
        "--no-verify-ssl", "--header", "B: 2", "--expect-status", "301",
    )  # fmt: skip
    assert data["url"] == "http://127.0.0.1:9/b"
    assert data["verify_ssl"] is False and data["follow_redirects"] is True
    assert data["headers"] == {"B": "2"} and data["expected_status"] == [301]
    data = cli.json("monitors", "edit", str(monitor_id), "--header", "")
    assert data["headers"] == {}


def test_edit_without_options_is_a_usage_error(cli: Cli) -> None:
    monitor_id = add(cli, "api")
    result = cli("monitors", "edit", str(monitor_id))
    assert result.exit_code == 2, describe(result)


def test_edit_that_breaks_validation_changes_nothing(cli: Cli, alice: Any) -> None:
    monitor_id = add(cli, "api", "http://127.0.0.1:9/a", "--interval", "30")
    result = cli("monitors", "edit", str(monitor_id), "--timeout", "60")  # > interval
    assert result.exit_code == 4, describe(result)
    assert "VALIDATION_ERROR" in result.stderr
    assert alice.get(f"/api/v1/monitors/{monitor_id}").json["data"]["timeout"] == 30


def test_rm_asks_first(cli: Cli, alice: Any) -> None:
    monitor_id = add(cli, "api")
    result = cli("monitors", "rm", str(monitor_id), input="n\n")
    assert result.exit_code == 1
    assert "Delete monitor" in result.stderr
    assert alice.get(f"/api/v1/monitors/{monitor_id}").status_code == 200
    result = cli.ok("monitors", "rm", str(monitor_id), input="y\n")
    assert "Deleted monitor" in result.stderr
    assert alice.get(f"/api/v1/monitors/{monitor_id}").status_code == 404


def test_rm_yes_does_not_ask(cli: Cli, alice: Any) -> None:
    monitor_id = add(cli, "api")
    body = cli.json("monitors", "rm", str(monitor_id), "--yes")
    assert body == {"message": "Monitor deleted"}
    assert alice.get(f"/api/v1/monitors/{monitor_id}").status_code == 404


def test_pause_and_resume(cli: Cli) -> None:
    monitor_id = add(cli, "api")
    result = cli.ok("monitors", "pause", str(monitor_id), "--reason", "deploy")
    assert "Paused monitor" in result.stderr
    shown = cli.json("monitors", "show", str(monitor_id))
    assert shown["paused"] is True and shown["pause_reason"] == "deploy"
    again = cli("monitors", "pause", str(monitor_id))
    assert again.exit_code == 4
    assert "MONITOR_ALREADY_PAUSED" in again.stderr
    data = cli.json("monitors", "resume", str(monitor_id))
    assert data["paused"] is False and data["status"] == "pending"
    again = cli("monitors", "resume", str(monitor_id))
    assert again.exit_code == 4 and "MONITOR_NOT_PAUSED" in again.stderr


def test_alerts_shows_and_changes_settings(cli: Cli) -> None:
    monitor_id = str(add(cli, "api"))
    data = cli.json("monitors", "alerts", monitor_id)
    assert data["email_recipients"] == ["alice@example.com"]
    assert data["alert_threshold"] == 1
    data = cli.json(
        "monitors", "alerts", monitor_id, "--no-email", "--recipient", "ops@example.com",
        "--recipient", "dev@example.com", "--threshold", "3", "--no-recovery",
        "--slack-webhook", "https://hooks.slack.example/T/B/x",
    )  # fmt: skip
    assert data["email_enabled"] is False
    assert data["email_recipients"] == ["ops@example.com", "dev@example.com"]
    assert data["alert_threshold"] == 3 and data["alert_on_recovery"] is False
    assert data["slack_enabled"] is True
    assert data["slack_webhook_url"] == "https://hooks.slack.example/T/B/x"
    data = cli.json("monitors", "alerts", monitor_id, "--email", "--no-slack")
    assert data["email_enabled"] is True and data["slack_enabled"] is False
    assert data["alert_threshold"] == 3  # untouched
    out = cli.ok("monitors", "alerts", monitor_id).stdout
    assert "ops@example.com" in out and "3 failed check run" in out
    assert "14d, 7d, 3d, 1d before expiry" in out


def test_alerts_sets_the_cert_expiry_thresholds(cli: Cli) -> None:
    monitor_id = str(add(cli, "api"))
    data = cli.json("monitors", "alerts", monitor_id, "--cert-expiry-days", "30, 7,1")
    assert data["cert_expiry_days"] == [30, 7, 1]
    data = cli.json("monitors", "alerts", monitor_id, "--cert-expiry-days", "off")
    assert data["cert_expiry_days"] == []
    assert "off" in cli.ok("monitors", "alerts", monitor_id).stdout
    bad = cli("monitors", "alerts", monitor_id, "--cert-expiry-days", "7,soon")
    assert bad.exit_code == 2 and "--cert-expiry-days" in bad.stderr
    refused = cli("monitors", "alerts", monitor_id, "--cert-expiry-days", "7,7")
    assert refused.exit_code == 4 and "cert_expiry_days" in refused.stderr


def test_alerts_sets_and_turns_off_noise_control(cli: Cli, alice: Any) -> None:
    monitor_id = str(add(cli, "api"))
    data = cli.json(
        "monitors", "alerts", monitor_id, "--recovery-threshold", "3",
        "--reminder-interval", "30m", "--flap-threshold", "4", "--flap-window", "1h",
    )  # fmt: skip
    assert (data["recovery_threshold"], data["reminder_interval"]) == (3, 1800)
    assert (data["flap_threshold"], data["flap_window"]) == (4, 3600)
    out = cli.ok("monitors", "alerts", monitor_id).stdout
    assert "every 30m" in out and "more than 4 changes in 1h" in out
    data = cli.json("monitors", "alerts", monitor_id, "--no-reminders", "--no-flap-detection")
    assert data["reminder_interval"] is None and data["flap_threshold"] is None
    assert data["recovery_threshold"] == 3 and data["flap_window"] == 3600  # untouched
    stored = alice.get(f"/api/v1/monitors/{monitor_id}/alerts").json["data"]
    assert stored["reminder_interval"] is None and stored["flap_threshold"] is None
    bad = cli("monitors", "alerts", monitor_id, "--reminder-interval", "soon")
    assert bad.exit_code == 2
    both = cli("monitors", "alerts", monitor_id, "--reminder-interval", "1h", "--no-reminders")
    assert both.exit_code == 2
    refused = cli("monitors", "alerts", monitor_id, "--reminder-interval", "10s")
    assert refused.exit_code == 4 and "reminder_interval" in refused.stderr


def test_show_says_when_a_monitor_is_flapping(cli: Cli) -> None:
    from datetime import UTC, datetime

    from uptime_server.models import Monitor

    monitor_id = add(cli, "api")
    assert cli.json("monitors", "show", str(monitor_id))["flapping"] is False
    Monitor.update(flapping_since=datetime(2026, 11, 22, tzinfo=UTC)).where(
        Monitor.id == monitor_id
    ).execute()
    assert cli.json("monitors", "show", str(monitor_id))["flapping"] is True
    assert "alerts are held" in cli.ok("monitors", "show", str(monitor_id)).stdout


def test_bulk_pause_resume_update_delete(cli: Cli, alice: Any) -> None:
    a, b = add(cli, "a"), add(cli, "b")
    data = cli.json("monitors", "bulk", "pause", str(a), str(b), "--reason", "maintenance")
    assert data == {"action": "pause", "succeeded": [a, b], "failed": []}
    assert cli.json("monitors", "show", str(a))["pause_reason"] == "maintenance"
    assert cli.json("monitors", "bulk", "resume", str(a), str(b))["succeeded"] == [a, b]
    data = cli.json(
        "monitors", "bulk", "update", str(a), str(b),
        "--set", "timeout=15", "--set", 'headers={"X-A": "1"}', "--set", "method=HEAD",
    )  # fmt: skip
    assert data["succeeded"] == [a, b]
    m = alice.get(f"/api/v1/monitors/{b}").json["data"]
    assert (m["timeout"], m["headers"], m["method"]) == (15, {"X-A": "1"}, "HEAD")
    data = cli.json("monitors", "bulk", "delete", str(a), str(b), "--yes")
    assert data["succeeded"] == [a, b]
    assert alice.get(f"/api/v1/monitors/{a}").status_code == 404


def test_bulk_reports_partial_failure_with_exit_1(cli: Cli, bob_cli: Cli) -> None:
    mine = add(cli, "mine")
    theirs = add(bob_cli, "theirs")
    result = cli("monitors", "bulk", "pause", str(mine), str(theirs))
    assert result.exit_code == 1, describe(result)
    assert "MONITOR_NOT_FOUND" in result.stdout
    assert "1 of 2" in result.stderr
    assert cli.json("monitors", "show", str(mine))["paused"] is True
    assert bob_cli.json("monitors", "show", str(theirs))["paused"] is False


def test_bulk_delete_asks_first(cli: Cli) -> None:
    a = add(cli, "a")
    result = cli("monitors", "bulk", "delete", str(a), input="n\n")
    assert result.exit_code == 1
    assert cli.json("monitors", "show", str(a))["id"] == a


@pytest.mark.parametrize(
    "args",
    [
        ["monitors", "bulk", "update", "1"],  # no --set
        ["monitors", "bulk", "pause", "1", "--set", "timeout=5"],  # --set without update
        ["monitors", "bulk", "update", "1", "--set", "timeout"],  # not field=value
        ["monitors", "bulk", "explode", "1"],
        ["monitors", "bulk", "pause"],  # no ids
    ],
)
def test_bulk_usage_errors(cli: Cli, args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 2, describe(result)


def test_another_users_monitor_is_not_found(cli: Cli, bob_cli: Cli) -> None:
    theirs = add(bob_cli, "theirs")
    for command in (["show"], ["edit", "--name", "x"], ["rm", "--yes"], ["pause"], ["alerts"]):
        result = cli("monitors", command[0], str(theirs), *command[1:])
        assert result.exit_code == 4, (command, describe(result))
        assert "MONITOR_NOT_FOUND" in result.stderr


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_the_basic_round_trip_on_each_database(cli: Cli) -> None:
    monitor_id = add(cli, "api")
    assert cli.json("monitors", "list")["data"][0]["id"] == monitor_id
    cli.ok("monitors", "rm", str(monitor_id), "--yes")
    assert cli.json("monitors", "list")["pagination"]["total"] == 0
