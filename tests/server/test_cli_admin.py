"""``uptime server admin grant|revoke|list``: the admin flag, set on the server's machine."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from uptime_cli.main import app
from uptime_server import db
from uptime_server.models import User


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_DATABASE_URL": f"sqlite:///{tmp_path / 'uptime.db'}",
        "UPTIME_ADMINS": "",
        "COLUMNS": "200",
    }


def invoke(env: dict[str, str], *args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


def session(env: dict[str, str], email: str) -> None:
    result = invoke(env, "server", "session", "--email", email)
    assert result.exit_code == 0, result.stderr


def listed(env: dict[str, str]) -> list[dict[str, Any]]:
    result = invoke(env, "server", "admin", "list", "--json")
    assert result.exit_code == 0, result.stderr
    data: list[dict[str, Any]] = json.loads(result.stdout)["data"]
    return data


def user_id(env: dict[str, str], email: str) -> int:
    database = db.bind(env["UPTIME_DATABASE_URL"])
    with database.connection_context():
        return int(User.get(User.email == email).id)


def test_grant_revoke_and_list_by_email_or_id(env: dict[str, str]) -> None:
    session(env, "carol@example.com")
    session(env, "dave@example.com")
    assert listed(env) == []
    assert "No admins" in invoke(env, "server", "admin", "list").stderr

    granted = invoke(env, "server", "admin", "grant", "Carol@Example.com")
    assert granted.exit_code == 0, granted.stderr
    assert "is now an admin" in granted.stderr and granted.stdout == ""
    dave = user_id(env, "dave@example.com")
    as_json = invoke(env, "server", "admin", "grant", str(dave), "--json")
    assert as_json.exit_code == 0, as_json.stderr
    assert json.loads(as_json.stdout)["is_admin"] is True

    admins = listed(env)
    assert [(a["email"], a["is_admin"], a["providers"]) for a in admins] == [
        ("carol@example.com", True, []),
        ("dave@example.com", True, []),
    ]
    assert set(admins[0]) == {
        "id", "email", "name", "is_admin", "providers", "created_at", "last_login"
    }  # fmt: skip
    table = invoke(env, "server", "admin", "list").stdout
    assert "carol@example.com" in table and "dave@example.com" in table and "local" in table

    again = invoke(env, "server", "admin", "grant", "carol@example.com")
    assert again.exit_code == 0 and "was already an admin" in again.stderr

    revoked = invoke(env, "server", "admin", "revoke", "carol@example.com")
    assert revoked.exit_code == 0, revoked.stderr
    assert "is no longer an admin" in revoked.stderr and "no admin is left" not in revoked.stderr
    assert [a["email"] for a in listed(env)] == ["dave@example.com"]


def test_revoking_the_last_admin_is_allowed_with_a_warning(env: dict[str, str]) -> None:
    session(env, "carol@example.com")
    assert invoke(env, "server", "admin", "grant", "carol@example.com").exit_code == 0

    result = invoke(env, "server", "admin", "revoke", "carol@example.com")

    assert result.exit_code == 0, result.stderr
    assert "no admin is left" in result.stderr
    assert listed(env) == []


def test_revoking_an_address_uptime_admins_lists_warns_it_comes_back(env: dict[str, str]) -> None:
    listing = {**env, "UPTIME_ADMINS": "carol@example.com"}
    session(listing, "carol@example.com")
    assert [a["email"] for a in listed(listing)] == ["carol@example.com"]

    result = invoke(listing, "server", "admin", "revoke", "carol@example.com")

    assert result.exit_code == 0
    assert "UPTIME_ADMINS lists carol@example.com" in result.stderr
    assert listed(listing) == []
    session(listing, "carol@example.com")  # the bootstrap, as it says
    assert [a["email"] for a in listed(listing)] == ["carol@example.com"]


@pytest.mark.parametrize("ref", ["nobody@example.com", "999", "0", "99999999999999999999"])
@pytest.mark.parametrize("verb", ["grant", "revoke"])
def test_an_unknown_user_exits_4(env: dict[str, str], verb: str, ref: str) -> None:
    session(env, "carol@example.com")
    result = invoke(env, "server", "admin", verb, ref)
    assert result.exit_code == 4, result.stderr
    assert result.stderr.startswith("uptime: no user") and result.stdout == ""
    assert listed(env) == []


def test_an_address_several_accounts_hold_must_be_named_by_id(env: dict[str, str]) -> None:
    session(env, "carol@example.com")
    database = db.bind(env["UPTIME_DATABASE_URL"])
    with database.connection_context():
        twin = User.create(email="CAROL@example.com", name="twin", created_at=datetime.now(UTC))

    result = invoke(env, "server", "admin", "grant", "carol@example.com")

    assert result.exit_code == 4
    assert "2 accounts hold" in result.stderr and str(twin.id) in result.stderr
    assert listed(env) == []
    assert invoke(env, "server", "admin", "grant", str(twin.id)).exit_code == 0
    assert [a["id"] for a in listed(env)] == [twin.id]


def test_a_local_session_finds_the_account_whatever_the_case(env: dict[str, str]) -> None:
    session(env, "carol@example.com")
    session(env, "Carol@Example.com")  # one account per address, as sign-up
    database = db.bind(env["UPTIME_DATABASE_URL"])
    with database.connection_context():
        assert [u.email for u in User.select()] == ["carol@example.com"]
        User.create(email="CAROL@example.com", name="twin", created_at=datetime.now(UTC))

    exact = invoke(env, "server", "session", "--email", "CAROL@example.com")
    ambiguous = invoke(env, "server", "session", "--email", "Carol@example.com")

    assert exact.exit_code == 0, exact.stderr
    assert ambiguous.exit_code == 2 and "2 accounts hold" in ambiguous.stderr
    with database.connection_context():
        assert User.select().count() == 2
