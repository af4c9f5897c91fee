"""``uptime tokens create|list|revoke`` and UPTIME_TOKEN, against a live daemon."""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Cli, describe
from uptime_cli.context import ERROR, REFUSED, USAGE


def create(cli: Cli, scope: str, *more: str) -> str:
    result = cli.ok("tokens", "create", f"{scope}-token", "--scope", scope, *more)
    return result.stdout.strip()


def test_create_prints_the_token_once_on_stdout(cli: Cli) -> None:
    result = cli.ok("tokens", "create", "ci", "--scope", "read")
    token = result.stdout.strip()
    assert token.startswith("upt_") and result.stdout == token + "\n"
    assert "shown only now" in result.stderr and token not in result.stderr
    listed = cli.ok("tokens", "list")
    assert token[:12] in listed.stdout and token not in listed.stdout


def test_create_json_prints_the_object(cli: Cli) -> None:
    created = cli.json("tokens", "create", "deploy", "--scope", "write", "--expires", "90d")
    assert created["token"].startswith("upt_")
    assert (created["name"], created["scope"]) == ("deploy", "write")
    assert created["created_at"] == "2026-11-22T12:00:00Z"
    assert created["expires_at"] == "2027-02-20T12:00:00Z"  # 90 days on


def test_list_and_revoke(cli: Cli) -> None:
    token = create(cli, "read")
    listed = cli.json("tokens", "list")["data"]
    assert [(t["name"], t["prefix"]) for t in listed] == [("read-token", token[:12])]
    assert all("token" not in t for t in listed)

    revoked = cli.json("tokens", "revoke", str(listed[0]["id"]))

    assert revoked == {"message": f"Token {listed[0]['id']} revoked"}
    assert cli.json("tokens", "list") == {"data": []}
    result = cli("monitors", "list", env={"UPTIME_TOKEN": token})
    assert result.exit_code == REFUSED, describe(result)
    assert "UNAUTHORIZED" in result.stderr
    missing = cli("tokens", "revoke", str(listed[0]["id"]))
    assert missing.exit_code == REFUSED and "TOKEN_NOT_FOUND" in missing.stderr


def test_a_bad_expiry_is_a_usage_error(cli: Cli) -> None:
    result = cli("tokens", "create", "ci", "--scope", "read", "--expires", "soon")
    assert result.exit_code == USAGE, describe(result)
    assert "--expires" in result.stderr
    assert cli.json("tokens", "list") == {"data": []}


def test_uptime_token_drives_every_command(cli: Cli, bob_cli: Cli) -> None:
    # Alice's session is in UPTIME_SESSION; bob's token wins over it.
    read = create(bob_cli, "read")
    write = create(bob_cli, "write")
    as_bob = {"UPTIME_TOKEN": write}
    added = cli.json("monitors", "add", "bobs", "http://127.0.0.1:9/", env=as_bob)
    assert cli.json("whoami", env=as_bob)["email"] == "bob@example.com"
    assert "an API token (UPTIME_TOKEN)" in cli.ok("whoami", env=as_bob).stdout
    listed = cli.json("monitors", "list", env={"UPTIME_TOKEN": read})["data"]
    assert [m["id"] for m in listed] == [added["id"]]
    assert cli.json("monitors", "list")["data"] == []  # alice, by her session

    refused = cli("monitors", "rm", str(added["id"]), "--yes", env={"UPTIME_TOKEN": read})

    assert refused.exit_code == REFUSED, describe(refused)
    assert "FORBIDDEN: A read token cannot make DELETE requests" in refused.stderr
    assert read not in refused.stdout + refused.stderr


def test_a_token_cannot_manage_tokens(cli: Cli) -> None:
    token = create(cli, "write")
    result = cli("tokens", "create", "more", "--scope", "write", env={"UPTIME_TOKEN": token})
    assert result.exit_code == REFUSED, describe(result)
    assert "FORBIDDEN" in result.stderr and "session" in result.stderr


def test_session_commands_explain_uptime_token(cli: Cli) -> None:
    token = create(cli, "read")
    for command in (["login", "--with-token"], ["logout"], ["refresh"]):
        result = cli(*command, input="x\n", env={"UPTIME_TOKEN": token})
        assert result.exit_code == ERROR, describe(result)
        assert "UPTIME_TOKEN is set" in result.stderr, command
    # The session those refused commands would have touched is still alive.
    assert cli.json("whoami")["email"] == "alice@example.com"


def test_the_help_tells_about_uptime_token(cli: Cli) -> None:
    assert "UPTIME_TOKEN" in cli.ok("--help").stdout


def test_debug_traces_never_show_the_token(cli: Cli, alice: Any) -> None:
    token = create(cli, "read")
    result = cli("--debug", "monitors", "list", env={"UPTIME_TOKEN": token})
    assert result.exit_code == 0, describe(result)
    assert "[http] > GET" in result.stderr
    assert token not in result.stdout + result.stderr


def test_login_with_an_api_token_points_to_uptime_token(cli: Cli) -> None:
    token = create(cli, "read")
    result = cli("login", "--with-token", input=token + "\n", env={"UPTIME_SESSION": None})
    assert result.exit_code == USAGE, describe(result)
    assert "set UPTIME_TOKEN" in result.stderr and token not in result.stderr
