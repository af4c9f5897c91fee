"""``uptime login --with-token|--local``, ``whoami``, ``refresh``, ``logout`` and saved sessions."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, LiveServer, base_env, describe
from uptime_cli import credentials
from uptime_server import db
from uptime_server.auth import admins


@pytest.fixture
def plain_cli(live: LiveServer, config_dir: Path) -> Cli:
    """No UPTIME_SESSION: commands use the saved session of the server."""
    return Cli({**base_env(config_dir), "UPTIME_SERVER": live.url})


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_login_with_token_saves_a_private_credentials_file(
    plain_cli: Cli, live: LiveServer, alice: Any, config_dir: Path
) -> None:
    result = plain_cli.ok("login", "--with-token", input=alice.token + "\n")
    assert f"✓ Logged in as alice@example.com on {live.url}" in result.stderr
    path = credentials.credentials_path(live.url, config_dir)
    assert path.is_file()
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(config_dir) == 0o700
    saved = json.loads(path.read_text())
    assert saved["session"] == alice.token
    assert saved["server"] == live.url
    assert saved["user"]["email"] == "alice@example.com"
    assert alice.token not in result.stdout + result.stderr


def test_saved_session_is_used_by_later_commands(plain_cli: Cli, alice: Any) -> None:
    plain_cli.ok("login", "--with-token", input=alice.token)
    user = plain_cli.json("whoami")
    assert user["email"] == "alice@example.com"
    assert user["provider"] == "local"
    out = plain_cli.ok("whoami").stdout
    assert "alice@example.com" in out and alice.token not in out


def test_the_server_of_the_saved_login_is_the_default(
    live: LiveServer, config_dir: Path, alice: Any
) -> None:
    env = base_env(config_dir)
    Cli({**env, "UPTIME_SERVER": live.url}).ok("login", "--with-token", input=alice.token)
    no_server = Cli(env)  # neither --server nor UPTIME_SERVER
    assert no_server.json("whoami")["email"] == "alice@example.com"
    # --server wins over the saved login's server
    result = no_server("--server", "http://127.0.0.1:1", "whoami")
    assert result.exit_code == 3, describe(result)


def test_uptime_session_overrides_the_saved_file(plain_cli: Cli, alice: Any, bob: Any) -> None:
    plain_cli.ok("login", "--with-token", input=alice.token)
    user = plain_cli.json("whoami", env={"UPTIME_SESSION": bob.token})
    assert user["email"] == "bob@example.com"
    result = plain_cli("whoami", env={"UPTIME_SESSION": "not-a-session"})
    assert result.exit_code == 4
    assert "UNAUTHORIZED" in result.stderr


def test_a_bad_token_is_refused_and_nothing_is_saved(
    plain_cli: Cli, live: LiveServer, config_dir: Path
) -> None:
    result = plain_cli("login", "--with-token", input="forged-token\n")
    assert result.exit_code == 4, describe(result)
    assert "UNAUTHORIZED" in result.stderr
    assert not credentials.credentials_path(live.url, config_dir).exists()


def test_with_token_needs_a_token_on_stdin(plain_cli: Cli) -> None:
    assert plain_cli("login", "--with-token", input="").exit_code == 2


def test_without_a_session_commands_are_refused_with_a_hint(plain_cli: Cli) -> None:
    result = plain_cli("monitors", "list")
    assert result.exit_code == 4
    assert "UNAUTHORIZED" in result.stderr
    assert "uptime login" in result.stderr


def test_logout_revokes_on_the_server_and_deletes_the_file(
    plain_cli: Cli, live: LiveServer, alice: Any, config_dir: Path
) -> None:
    plain_cli.ok("login", "--with-token", input=alice.token)
    result = plain_cli.ok("logout")
    assert "Logged out" in result.stderr
    assert not credentials.credentials_path(live.url, config_dir).exists()
    # the token is dead on the server too
    assert alice.get("/api/v1/auth/user").status_code == 401
    again = plain_cli("logout")
    assert again.exit_code == 1 and "not logged in" in again.stderr


def test_logout_json_prints_the_response(cli: Cli) -> None:
    assert cli.json("logout") == {"message": "Logged out"}


def test_refresh_extends_the_session_and_updates_the_file(
    plain_cli: Cli, live: LiveServer, alice: Any, config_dir: Path, clock: Any
) -> None:
    plain_cli.ok("login", "--with-token", input=alice.token)
    clock.advance(3600)
    body = plain_cli.json("refresh")
    assert body["expires_at"] == "2026-12-06T13:00:00Z"  # 14 days after the test clock's now
    saved = credentials.load(live.url, config_dir)
    assert saved is not None and saved.expires_at == "2026-12-06T13:00:00Z"
    assert "Session valid until" in plain_cli.ok("refresh").stderr


def test_login_local_mints_a_session_in_the_database(
    live: LiveServer, config_dir: Path, settings_env: dict[str, str], restore_binding: None
) -> None:
    cli = Cli({**base_env(config_dir), **settings_env, "UPTIME_SERVER": live.url})
    result = cli.ok("login", "--local", "--email", "carol@example.com", "--name", "Carol")
    assert "carol@example.com" in result.stderr
    saved = credentials.load(live.url, config_dir)
    assert saved is not None and saved.provider == "local"
    assert mode(credentials.credentials_path(live.url, config_dir)) == 0o600
    user = cli.json("whoami")
    assert (user["email"], user["name"]) == ("carol@example.com", "Carol")


def own_database_env(tmp_path: Path, config_dir: Path, **settings: str) -> dict[str, str | None]:
    """The CLI's environment for ``login --local`` on a SQLite database of its own."""
    return {
        **base_env(config_dir),
        "UPTIME_DATA_DIR": str(tmp_path / "own-data"),
        "UPTIME_DATABASE_URL": f"sqlite:///{tmp_path / 'own.db'}",
        **settings,
    }


def test_login_local_saves_for_the_daemons_base_url_by_default(
    tmp_path: Path, config_dir: Path, restore_binding: None
) -> None:
    env = own_database_env(
        tmp_path,
        config_dir,
        UPTIME_BASE_URL="http://127.0.0.1:18123/",
        UPTIME_SECRET_KEY="k",
    )
    Cli(env).ok("login", "--local", "--email", "dave@example.com")
    assert credentials.default_server(config_dir) == "http://127.0.0.1:18123"


@pytest.mark.parametrize("email", ["root@localhost", "ops@host.local", "admin@corp.internal"])
def test_login_local_takes_the_addresses_of_a_self_hosted_network(
    tmp_path: Path, config_dir: Path, restore_binding: None, email: str
) -> None:
    env = own_database_env(tmp_path, config_dir, UPTIME_BASE_URL="http://127.0.0.1:18124/")
    result = Cli(env).ok("login", "--local", "--email", email)
    assert f"Logged in as {email}" in result.stderr
    saved = credentials.load("http://127.0.0.1:18124", config_dir)
    assert saved is not None and saved.user["email"] == email


def test_login_local_rejects_a_bad_email(
    tmp_path: Path, config_dir: Path, restore_binding: None
) -> None:
    env = own_database_env(tmp_path, config_dir)
    result = Cli(env)("login", "--local", "--email", "not-an-email")
    assert result.exit_code == 2, describe(result)
    assert "invalid email" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["login", "--local", "--with-token"],
        ["login", "--email", "a@example.com"],
        ["login", "--timeout", "0"],
    ],
)
def test_login_usage_errors(plain_cli: Cli, args: list[str]) -> None:
    assert plain_cli(*args).exit_code == 2


def test_whoami_says_whether_the_user_is_an_admin(plain_cli: Cli, alice: Any, bob: Any) -> None:
    with db.database.connection_context():
        admins.set_admin(alice.user, True)
    as_alice, as_bob = {"UPTIME_SESSION": alice.token}, {"UPTIME_SESSION": bob.token}
    assert plain_cli.json("whoami", env=as_alice)["is_admin"] is True
    assert plain_cli.json("whoami", env=as_bob)["is_admin"] is False
    assert re.search(r"Admin\s+yes", plain_cli.ok("whoami", env=as_alice).stdout)
    assert re.search(r"Admin\s+no", plain_cli.ok("whoami", env=as_bob).stdout)


def test_login_local_with_an_address_uptime_admins_lists_makes_an_admin(
    live: LiveServer, config_dir: Path, settings_env: dict[str, str], restore_binding: None
) -> None:
    env = {**base_env(config_dir), **settings_env, "UPTIME_SERVER": live.url}
    cli = Cli({**env, "UPTIME_ADMINS": "carol@example.com"})
    cli.ok("login", "--local", "--email", "carol@example.com")
    assert cli.json("whoami")["is_admin"] is True
