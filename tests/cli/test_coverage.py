"""Every API endpoint has a command; every command has help; completion works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from flask import Flask

from tests.cli.conftest import Cli, base_env
from uptime_cli.main import app as cli_app

# (method, rule with its converters blanked as <>) → the command that uses it.
COMMANDS = {
    ("GET", "/api/v1/auth/user"): "whoami",
    ("POST", "/api/v1/auth/refresh"): "refresh",
    ("POST", "/api/v1/auth/logout"): "logout",
    ("GET", "/api/v1/auth/<>/login"): "login",  # opened in the browser by `login`
    ("GET", "/api/v1/auth/<>/callback"): "login",  # reached by that browser
    ("POST", "/api/v1/auth/cli/exchange"): "login",
    ("GET", "/api/v1/monitors"): "monitors list",
    ("POST", "/api/v1/monitors"): "monitors add",
    ("GET", "/api/v1/monitors/<>"): "monitors show",
    ("PUT", "/api/v1/monitors/<>"): "monitors edit",
    ("DELETE", "/api/v1/monitors/<>"): "monitors rm",
    ("POST", "/api/v1/monitors/<>/pause"): "monitors pause",
    ("POST", "/api/v1/monitors/<>/resume"): "monitors resume",
    ("POST", "/api/v1/monitors/<>/test"): "monitors test",
    ("GET", "/api/v1/monitors/<>/stats"): "monitors stats",
    ("GET", "/api/v1/monitors/<>/history"): "monitors history",
    ("GET", "/api/v1/monitors/<>/dependencies"): "monitors deps",
    ("GET", "/api/v1/monitors/<>/alerts"): "monitors alerts",
    ("PUT", "/api/v1/monitors/<>/alerts"): "monitors alerts",
    ("POST", "/api/v1/monitors/bulk"): "monitors bulk",
    ("POST", "/api/v1/monitors/apply"): "apply",
    ("GET", "/api/v1/monitors/export"): "export",
    ("POST", "/api/v1/monitors/<>/ping-token"): "monitors rotate-ping-token",
    ("POST", "/api/v1/monitors/<>/badge-token"): "monitors badges",
    ("GET", "/api/v1/status-pages"): "status-pages list",
    ("POST", "/api/v1/status-pages"): "status-pages add",
    ("GET", "/api/v1/status-pages/<>"): "status-pages show",
    ("PUT", "/api/v1/status-pages/<>"): "status-pages edit",
    ("DELETE", "/api/v1/status-pages/<>"): "status-pages delete",
    ("GET", "/api/v1/notifications"): "notifications list",
    ("GET", "/api/v1/notifications/active"): "notifications active",
    ("GET", "/api/v1/notifications/recent"): "notifications recent",
    ("GET", "/api/v1/notifications/<>"): "notifications show",
    ("POST", "/api/v1/notifications/<>/acknowledge"): "notifications ack",
    ("POST", "/api/v1/notifications/<>/resolve"): "notifications resolve",
    ("POST", "/api/v1/tokens"): "tokens create",
    ("GET", "/api/v1/tokens"): "tokens list",
    ("DELETE", "/api/v1/tokens/<>"): "tokens revoke",
    ("POST", "/api/v1/agents"): "agents create",
    ("GET", "/api/v1/agents"): "agents list",
    ("DELETE", "/api/v1/agents/<>"): "agents revoke",
    ("GET", "/api/v1/channels"): "channels list",
    ("POST", "/api/v1/channels"): "channels add",
    ("GET", "/api/v1/channels/<>"): "channels show",
    ("PUT", "/api/v1/channels/<>"): "channels edit",
    ("DELETE", "/api/v1/channels/<>"): "channels delete",
    ("POST", "/api/v1/channels/<>/test"): "channels test",
    ("GET", "/api/v1/maintenance"): "maintenance list",
    ("POST", "/api/v1/maintenance"): "maintenance add",
    ("GET", "/api/v1/maintenance/<>"): "maintenance show",
    ("PUT", "/api/v1/maintenance/<>"): "maintenance edit",
    ("DELETE", "/api/v1/maintenance/<>"): "maintenance delete",
    ("POST", "/api/v1/maintenance/<>/start"): "maintenance start",
    ("POST", "/api/v1/maintenance/<>/end"): "maintenance end",
    ("GET", "/api/v1/teams"): "teams list",
    ("POST", "/api/v1/teams"): "teams create",
    ("GET", "/api/v1/teams/<>"): "teams show",  # and `teams switch`
    ("PUT", "/api/v1/teams/<>"): "teams rename",
    ("DELETE", "/api/v1/teams/<>"): "teams delete",
    ("GET", "/api/v1/teams/<>/members"): "teams members",
    ("PUT", "/api/v1/teams/<>/members/<>"): "teams role",
    ("DELETE", "/api/v1/teams/<>/members/<>"): "teams remove",  # and `teams leave`
    ("POST", "/api/v1/teams/<>/invitations"): "teams invite",
    ("GET", "/api/v1/teams/<>/invitations"): "teams invitations",
    ("DELETE", "/api/v1/teams/<>/invitations/<>"): "teams revoke",
    ("POST", "/api/v1/invitations/accept"): "teams join",
    ("GET", "/api/v1/teams/<>/audit"): "audit",
}
# Endpoints that are not user data, and why they have no command.
NOT_COMMANDS = {
    ("GET", "/api/v1/openapi.json"): "the API's own machine-readable description",
    # The agent API: called by `uptime agent run`, with an agent token.
    ("POST", "/api/v1/agent/claims"): "agent run",
    ("POST", "/api/v1/agent/leases"): "agent run",
    ("POST", "/api/v1/agent/results"): "agent run",
}


def api_endpoints(app: Flask) -> set[tuple[str, str]]:
    found = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1"):
            continue
        for method in rule.methods or ():
            if method not in ("HEAD", "OPTIONS"):
                found.add((method, re.sub(r"<[^>]*>", "<>", rule.rule)))
    return found


def command_names(group: Any, prefix: str = "") -> set[str]:
    names = set()
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        names.add(path)
        if hasattr(command, "commands"):
            names |= command_names(command, path + " ")
    return names


def test_every_api_endpoint_has_a_command(app: Flask) -> None:
    missing = sorted(api_endpoints(app) - COMMANDS.keys() - NOT_COMMANDS.keys())
    assert not missing, f"endpoints without a CLI command (add one, then list it here): {missing}"


def test_every_listed_command_exists() -> None:
    names = command_names(typer.main.get_command(cli_app))
    assert set(COMMANDS.values()) <= names, set(COMMANDS.values()) - names


def test_every_command_has_help_text() -> None:
    root = typer.main.get_command(cli_app)

    def walk(group: Any, path: str) -> list[str]:
        lacking = []
        for name, command in group.commands.items():
            if not (command.help or command.short_help):
                lacking.append(f"{path} {name}")
            if hasattr(command, "commands"):
                lacking += walk(command, f"{path} {name}")
        return lacking

    assert walk(root, "uptime") == []


@pytest.mark.parametrize(
    "words, expected",
    [
        ("uptime mon", "monitors"),
        ("uptime monitors pa", "pause"),
        ("uptime notifications re", "recent"),
        ("uptime monitors list --st", "--status"),
    ],
)
def test_shell_completion_answers(words: str, expected: str, tmp_path: Path) -> None:
    env = {
        **base_env(tmp_path),
        "_UPTIME_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    result = Cli(env)()  # the runner names the program "uptime", as installed
    assert expected in result.stdout.split()


def test_install_completion_writes_the_bash_script(tmp_path: Path) -> None:
    uptime = Path(sys.executable).with_name("uptime")
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_")}
    env.update({"HOME": str(tmp_path), "SHELL": "/bin/bash"})
    # run from bash, as a user would, so the shell is detected as bash; the
    # "; exit" keeps bash as the parent (a lone command is exec'd in its place,
    # and the shell would be looked for above pytest)
    done = subprocess.run(
        ["bash", "-c", f"'{uptime}' --install-completion; exit $?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "uptime.sh"
    assert "_UPTIME_COMPLETE" in script.read_text()
    assert str(script) in (tmp_path / ".bashrc").read_text()
