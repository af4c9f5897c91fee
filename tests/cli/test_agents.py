"""``uptime agents create|list|revoke`` against a live daemon, as an admin and not."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli, describe
from uptime_cli.context import REFUSED


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
