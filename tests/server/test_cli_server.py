"""``uptime server migrate|session`` and start-up refusals of ``uptime server run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from uptime_cli.main import app
from uptime_server import db as dbmod
from uptime_server.auth.sessions import find_session
from uptime_server.clock import Clock
from uptime_server.models import User


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_DATABASE_URL": f"sqlite:///{tmp_path / 'uptime.db'}",
    }


def invoke(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner().invoke(app, args, env=env)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("UPTIME_PORT", "eighty"),
        ("UPTIME_DATABASE_URL", "mysql://db/uptime"),
        ("UPTIME_SMTP_TLS", "tls"),
        ("UPTIME_RATE_LIMIT", "lots"),
        ("UPTIME_SESSION_TTL", "forever"),
    ],
)
@pytest.mark.parametrize("command", [["server", "run"], ["server", "migrate"]])
def test_it_stops_on_a_bad_setting_with_one_line(
    env: dict[str, str], command: list[str], name: str, value: str
) -> None:
    result = invoke(command, {**env, name: value})
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"uptime: configuration error: {name}: ")


def test_it_migrates(env: dict[str, str]) -> None:
    result = invoke(["server", "migrate"], env)
    assert result.exit_code == 0, result.stderr
    assert "Database is up to date." in result.stderr
    assert Path(env["UPTIME_DATABASE_URL"].removeprefix("sqlite:///")).exists()


def test_it_mints_a_session(env: dict[str, str]) -> None:
    result = invoke(["server", "session", "--email", "Carol@Example.com", "--name", "Carol"], env)
    assert result.exit_code == 0, result.stderr
    token = result.stdout.strip()
    assert len(token) >= 43 and "\n" not in token
    database = dbmod.bind(env["UPTIME_DATABASE_URL"])
    with database.connection_context():
        row = find_session(token, now=Clock().now())
        assert row is not None and row.provider == "local"
        user = User.get_by_id(row.user_id)
        assert (user.email, user.name) == ("Carol@example.com", "Carol")
        # A second session for the same address is the same user.
        again = invoke(["server", "session", "--email", "Carol@Example.com"], env)
        assert find_session(again.stdout.strip(), now=Clock().now()).user_id == user.id
        assert User.select().count() == 1


@pytest.mark.parametrize("email", ["root@localhost", "ops@host.local", "admin@corp.internal"])
def test_it_takes_the_addresses_of_a_self_hosted_network(env: dict[str, str], email: str) -> None:
    result = invoke(["server", "session", "--email", email], env)
    assert result.exit_code == 0, result.stderr
    database = dbmod.bind(env["UPTIME_DATABASE_URL"])
    with database.connection_context():
        row = find_session(result.stdout.strip(), now=Clock().now())
        assert row is not None and User.get_by_id(row.user_id).email == email


def test_it_refuses_a_bad_email(env: dict[str, str]) -> None:
    result = invoke(["server", "session", "--email", "not an address"], env)
    assert result.exit_code == 2
    assert result.stderr.startswith("uptime: invalid email address")
    assert result.stdout == ""


def test_it_refuses_an_unknown_location(env: dict[str, str]) -> None:
    result = invoke(["server", "run", "--location", "mars"], env)
    assert result.exit_code == 2
    assert "unknown location 'mars'" in result.stderr


def test_it_names_an_unreachable_database(env: dict[str, str]) -> None:
    down = {**env, "UPTIME_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    result = invoke(["server", "migrate"], down)
    assert result.exit_code == 1
    assert result.stderr.startswith("uptime: cannot open the database (UPTIME_DATABASE_URL): ")
    assert len(result.stderr.splitlines()) == 1
