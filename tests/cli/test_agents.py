"""``uptime agents create|list|revoke`` against a live daemon, as an admin and not."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.api.tokens import mint
from tests.cli.conftest import Cli, describe
from uptime_cli.context import REFUSED
from uptime_server.clock import isoformat


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {
        **settings_env,
        "UPTIME_LOCATIONS": "local,eu-west",
        "UPTIME_ADMINS": "alice@example.com",
    }


def test_an_admin_creates_lists_and_revokes_agents(cli: Cli) -> None:
    created = cli.ok("agents", "create", "--location", "eu-west", "--name", "paris")
    token = created.stdout.strip()
    assert token.startswith("upa_") and created.stdout == token + "\n"
    assert "shown only now" in created.stderr

    [listed] = cli.json("agents", "list")["data"]
    assert (listed["name"], listed["location"], listed["prefix"]) == (
        "paris",
        "eu-west",
        token[:12],
    )
    assert "token" not in listed
    table = cli.ok("agents", "list").stdout
    assert "paris" in table and "never" in table

    assert cli.json("agents", "revoke", str(listed["id"])) == {
        "message": f"Agent {listed['id']} revoked"
    }
    assert cli.json("agents", "list") == {"data": []}


def test_an_unknown_location_and_a_non_admin_are_refused(cli: Cli, bob) -> None:
    bad = cli("agents", "create", "--location", "mars")
    assert bad.exit_code == REFUSED and "location" in bad.stderr, describe(bad)
    as_bob = cli("agents", "list", env={"UPTIME_SESSION": bob.token})
    assert as_bob.exit_code == REFUSED and "FORBIDDEN" in as_bob.stderr, describe(as_bob)


def test_an_agent_token_may_expire(cli: Cli, clock) -> None:
    created = cli.json("agents", "create", "--location", "eu-west", "--expires", "90d")
    assert created["expires_at"] == isoformat(clock.now() + timedelta(days=90))
    text = cli.ok("agents", "create", "--location", "eu-west", "--expires", "12h")
    assert "expires: " in text.stderr and "never" not in text.stderr
    table = cli.ok("agents", "list").stdout
    assert "EXPIRES" in table and "02-20 12:00" in table  # 90 days on

    bad = cli("agents", "create", "--location", "eu-west", "--expires", "soon")
    assert bad.exit_code == 2 and "--expires" in bad.stderr, describe(bad)


def test_an_api_token_cannot_create_or_revoke_agents(cli: Cli, alice) -> None:
    [agent_id] = [cli.json("agents", "create", "--location", "eu-west")["id"]]
    token = mint(alice, "write").token
    as_token = {"UPTIME_SESSION": None, "UPTIME_TOKEN": token}

    create = cli("agents", "create", "--location", "eu-west", env=as_token)
    revoke = cli("agents", "revoke", str(agent_id), env=as_token)

    for result in (create, revoke):
        assert result.exit_code == REFUSED and "FORBIDDEN" in result.stderr, describe(result)
    assert [a["id"] for a in cli.json("agents", "list", env=as_token)["data"]] == [agent_id]
