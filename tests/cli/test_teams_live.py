"""``uptime teams ...``, --team, UPTIME_TEAM and whoami against a live daemon.

The other CLI tests of teams (tests/cli/test_teams.py) check each request
against a stub; these check that the real server answers them as the CLI
expects, end to end.
"""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Cli, describe
from uptime_server.models import Membership


def test_teams_round_trip(cli: Cli, bob_cli: Cli, alice: Any, bob: Any, clock: Any) -> None:
    team = cli.json("teams", "create", "Ops", "--slug", "ops")
    assert (team["slug"], team["role"], team["members"], team["personal"]) == (
        "ops",
        "owner",
        1,
        False,
    )
    listed = cli.json("teams", "list")["data"]
    assert [(t["slug"], t["role"]) for t in listed] == [("alice", "owner"), ("ops", "owner")]
    Membership.create(team=team["id"], user=bob.user.id, role="viewer", created_at=clock.now())

    members = cli.json("teams", "members", "--team", "ops")["data"]
    assert [(m["user_id"], m["role"]) for m in members] == [
        (alice.user.id, "owner"),
        (bob.user.id, "viewer"),
    ]
    changed = cli.json("--team", "ops", "teams", "role", str(bob.user.id), "admin")
    assert (changed["user_id"], changed["role"]) == (bob.user.id, "admin")

    # whoami names the team and role, by --team and by UPTIME_TEAM.
    me = bob_cli.json("--team", "ops", "whoami")
    assert (me["team"]["slug"], me["role"]) == ("ops", "admin")
    me = bob_cli.json("whoami", env={"UPTIME_TEAM": "ops"})
    assert (me["team"]["slug"], me["role"]) == ("ops", "admin")
    me = bob_cli.json("whoami")
    assert (me["team"]["slug"], me["role"]) == ("bob", "owner")
    shown = bob_cli.ok("--team", "ops", "whoami").stdout
    assert "Ops (ops)" in shown and "admin" in shown

    # Bob leaves: the team is gone for him at once.
    left = bob_cli("--team", "ops", "teams", "leave")
    assert left.exit_code == 0, describe(left)
    refused = bob_cli("--team", "ops", "monitors", "list")
    assert refused.exit_code == 4 and "TEAM_NOT_FOUND" in refused.stderr, describe(refused)
    # The last owner can't.
    last = cli("teams", "leave", "--team", "ops")
    assert last.exit_code == 4 and "LAST_OWNER" in last.stderr, describe(last)


def test_team_choice_reaches_the_server(cli: Cli, alice: Any) -> None:
    cli.json("teams", "create", "Ops", "--slug", "ops")
    body = {"name": "in ops", "url": "http://127.0.0.1:9/", "type": "http"}
    assert (
        alice.post("/api/v1/monitors", json=body, headers={"X-Uptime-Team": "ops"}).status_code
        == 201
    )

    def names(*args: str, env: dict[str, str | None] | None = None) -> list[str]:
        found = cli.json(*args, "monitors", "list", env=env)["data"]
        return [m["name"] for m in found]

    assert names() == []
    assert names("--team", "ops") == ["in ops"]
    assert names(env={"UPTIME_TEAM": "ops"}) == ["in ops"]
    # --team beats UPTIME_TEAM.
    assert names("--team", "alice", env={"UPTIME_TEAM": "ops"}) == []
    # A saved default, below both.
    cli.ok("teams", "switch", "ops")
    assert names() == ["in ops"]
    assert names(env={"UPTIME_TEAM": "alice"}) == []
    missing = cli("--team", "nope", "monitors", "list")
    assert missing.exit_code == 4 and "TEAM_NOT_FOUND" in missing.stderr, describe(missing)
