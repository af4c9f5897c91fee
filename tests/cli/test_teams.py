"""``uptime teams ...``, ``uptime audit``, ``--team`` / UPTIME_TEAM / ``teams switch``.

Against a recording stand-in for the API (tests/cli/api_stub.py): what
matters here is what the CLI sends (method, path, body, query and the
X-Uptime-Team header) and what it prints.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.api_stub import ApiStub, Seen, api_stub
from tests.cli.conftest import Cli, base_env, describe
from uptime_cli import credentials
from uptime_cli.commands.teams import invitation_token
from uptime_cli.context import ERROR, REFUSED, USAGE

TEAM = {
    "id": 3,
    "name": "Ops",
    "slug": "ops",
    "created_at": "2026-11-22T12:00:00Z",
    "personal": False,
    "role": "owner",
    "members": 2,
}
PERSONAL = {**TEAM, "id": 1, "name": "Alice", "slug": "alice", "personal": True, "members": 1}
USER = {
    "id": 7,
    "email": "alice@example.com",
    "name": "Alice",
    "provider": "github",
    "is_admin": False,
    "team": {"id": 1, "name": "Alice", "slug": "alice"},
    "role": "owner",
}
MEMBER = {
    "user_id": 8,
    "name": "Bob",
    "email": "bob@example.com",
    "role": "member",
    "joined_at": "2026-11-22T12:00:00Z",
}
INVITATION = {
    "id": 5,
    "team_id": 3,
    "email": "carol@example.com",
    "role": "admin",
    "created_at": "2026-11-22T12:00:00Z",
    "expires_at": "2026-11-29T12:00:00Z",
    "invited_by": {"id": 7, "name": "Alice"},
    "status": "pending",
}
EVENT = {
    "id": 10,
    "at": "2026-11-22T12:00:00Z",
    "team_id": 3,
    "actor": {"id": 7, "name": "Alice"},
    "via": {"type": "token", "id": 5},
    "action": "member.role",
    "target": {"type": "user", "id": 8},
    "details": {"from": "member", "to": "admin"},
}
GONE = {"message": "Done"}


@pytest.fixture
def stub() -> Iterator[ApiStub]:
    with api_stub() as running:
        running.route("GET", "/auth/user", USER)
        running.route("GET", "/teams", [PERSONAL, TEAM])
        running.route("POST", "/teams", TEAM, status=201)
        running.route("GET", "/teams/ops", TEAM)
        running.route("GET", "/teams/alice", PERSONAL)
        running.route("PUT", "/teams/ops", {**TEAM, "name": "Operations", "slug": "operations"})
        running.route("DELETE", "/teams/ops", {"message": "Team deleted"})
        running.route("GET", "/teams/ops/members", [MEMBER])
        running.route("PUT", "/teams/ops/members/8", {**MEMBER, "role": "admin"})
        running.route("DELETE", "/teams/ops/members/8", GONE)
        running.route("DELETE", "/teams/ops/members/7", GONE)
        running.route("POST", "/teams/ops/invitations", INVITATION, status=201)
        running.route("GET", "/teams/ops/invitations", [INVITATION])
        running.route("DELETE", "/teams/ops/invitations/5", GONE)
        running.route("POST", "/invitations/accept", {**TEAM, "role": "member"})
        running.route("GET", "/teams/ops/audit", [EVENT])
        running.route("GET", "/teams/alice/audit", [])
        yield running


@pytest.fixture
def tcli(stub: ApiStub, config_dir: Path) -> Cli:
    """Alice's session (UPTIME_SESSION) against the stub."""
    return Cli({**base_env(config_dir), "UPTIME_SERVER": stub.url, "UPTIME_SESSION": "s3ss10n"})


def only(stub: ApiStub, method: str, path: str) -> Seen:
    seen = stub.seen(method, path)
    assert len(seen) == 1, [(r.method, r.path) for r in stub.requests]
    return seen[0]


# -- the team of every request ----------------------------------------------------


def test_no_team_chosen_sends_no_header(tcli: Cli, stub: ApiStub) -> None:
    tcli.ok("whoami")
    assert stub.last().team is None
    assert stub.last().headers["cookie"] == "session_cookie=s3ss10n"


def test_precedence_is_option_then_env_then_saved_default(tcli: Cli, stub: ApiStub) -> None:
    tcli.ok("teams", "switch", "ops")
    assert only(stub, "GET", "/teams/ops").path == "/teams/ops"
    stub.reset()

    tcli.ok("whoami")
    assert stub.last().team == "ops"  # the saved default
    tcli.ok("whoami", env={"UPTIME_TEAM": "dev"})
    assert stub.last().team == "dev"  # UPTIME_TEAM beats the default
    tcli.ok("--team", "prod", "whoami", env={"UPTIME_TEAM": "dev"})
    assert stub.last().team == "prod"  # --team beats both
    tcli.ok("whoami", env={"UPTIME_TEAM": ""})
    assert stub.last().team == "ops"  # an empty variable is no choice
    assert [r.path for r in stub.requests] == ["/auth/user"] * 4


def test_every_api_request_carries_the_header(tcli: Cli, stub: ApiStub) -> None:
    stub.route("GET", "/monitors", [])
    stub.route("GET", "/channels", [])
    stub.route("GET", "/tokens", [])
    for args in (["monitors", "list"], ["channels", "list"], ["tokens", "list"]):
        tcli.ok("--team", "ops", *args)
    assert [(r.path, r.team) for r in stub.requests] == [
        ("/monitors", "ops"),
        ("/channels", "ops"),
        ("/tokens", "ops"),
    ]


def test_the_default_is_saved_per_server_in_a_private_file(
    tcli: Cli, stub: ApiStub, config_dir: Path
) -> None:
    with api_stub() as other:
        other.route("GET", "/auth/user", USER)
        tcli.ok("teams", "switch", "ops")
        tcli.ok("whoami", env={"UPTIME_SERVER": other.url})
        assert other.last().team is None  # the other server has no default
        assert tcli("--server", other.url, "teams", "switch", "alice").exit_code == REFUSED
        assert other.last().team is None  # nothing was saved by the refused switch
        other.route("GET", "/teams/alice", PERSONAL)
        tcli.ok("--server", other.url, "teams", "switch", "alice")
        tcli.ok("whoami", env={"UPTIME_SERVER": other.url})
        assert other.last().team == "alice"
    tcli.ok("whoami")
    assert stub.last().team == "ops"

    path = config_dir / credentials.TEAMS_FILE
    assert json.loads(path.read_text()) == {stub.url: "ops", other.url: "alice"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert credentials.saved_team(stub.url + "/", config_dir) == "ops"  # normalised URL


def test_the_default_outlives_a_logout(tcli: Cli, stub: ApiStub, config_dir: Path) -> None:
    tcli.ok("teams", "switch", "ops")
    credentials.delete(stub.url, config_dir)
    assert credentials.saved_team(stub.url, config_dir) == "ops"


def test_switching_to_an_unknown_team_saves_nothing(tcli: Cli, stub: ApiStub) -> None:
    stub.answer(
        "GET",
        "/teams/nope",
        (404, {"error": {"code": "TEAM_NOT_FOUND", "message": "Team not found", "details": {}}}),
    )
    result = tcli("teams", "switch", "nope")
    assert result.exit_code == REFUSED, describe(result)
    assert "TEAM_NOT_FOUND: Team not found" in result.stderr
    assert "uptime teams switch SLUG" in result.stderr  # the hint
    tcli.ok("whoami")
    assert stub.last().team is None


def test_a_stale_default_is_dropped_for_team_listing(tcli: Cli, stub: ApiStub) -> None:
    tcli.ok("teams", "switch", "ops")
    refused = (404, {"error": {"code": "TEAM_NOT_FOUND", "message": "Team not found"}})
    stub.answer("GET", "/teams", lambda seen: refused if seen.team else (200, {"data": [PERSONAL]}))
    result = tcli.ok("teams", "list", "--json")
    assert json.loads(result.stdout) == {"data": [PERSONAL]}
    assert "not one of yours any more" in result.stderr
    assert [r.team for r in stub.seen("GET", "/teams")] == ["ops", None]
    tcli.ok("teams", "switch", "alice")  # and switching repairs it
    tcli.ok("whoami")
    assert stub.last().team == "alice"


def test_a_stale_team_named_explicitly_is_not_retried(tcli: Cli, stub: ApiStub) -> None:
    refused = (404, {"error": {"code": "TEAM_NOT_FOUND", "message": "Team not found"}})
    stub.answer("GET", "/teams", refused)
    result = tcli("--team", "gone", "teams", "list")
    assert result.exit_code == REFUSED, describe(result)
    assert len(stub.seen("GET", "/teams")) == 1


# -- one request per command -------------------------------------------------------

# (command line, method, path, body, query) with the team chosen by --team ops.
REQUESTS = [
    ("teams list", "GET", "/teams", None, {}),
    ("teams create Ops", "POST", "/teams", {"name": "Ops"}, {}),
    ("teams create Ops --slug ops", "POST", "/teams", {"name": "Ops", "slug": "ops"}, {}),
    ("teams show ops", "GET", "/teams/ops", None, {}),
    ("teams show", "GET", "/teams/ops", None, {}),
    ("teams rename ops Operations", "PUT", "/teams/ops", {"name": "Operations"}, {}),
    (
        "teams rename ops Operations --slug operations",
        "PUT",
        "/teams/ops",
        {"name": "Operations", "slug": "operations"},
        {},
    ),
    ("teams delete ops --yes", "DELETE", "/teams/ops", None, {}),
    ("teams members", "GET", "/teams/ops/members", None, {}),
    (
        "teams invite carol@example.com",
        "POST",
        "/teams/ops/invitations",
        {"email": "carol@example.com", "role": "member"},
        {},
    ),
    (
        "teams invite carol@example.com --role admin",
        "POST",
        "/teams/ops/invitations",
        {"email": "carol@example.com", "role": "admin"},
        {},
    ),
    ("teams role 8 admin", "PUT", "/teams/ops/members/8", {"role": "admin"}, {}),
    ("teams remove 8", "DELETE", "/teams/ops/members/8", None, {}),
    ("teams leave", "DELETE", "/teams/ops/members/7", None, {}),
    ("teams invitations", "GET", "/teams/ops/invitations", None, {}),
    ("teams revoke 5", "DELETE", "/teams/ops/invitations/5", None, {}),
    ("teams join abc123", "POST", "/invitations/accept", {"token": "abc123"}, {}),
    ("audit", "GET", "/teams/ops/audit", None, {}),
    (
        "audit --since 7d --actor 7 --action monitor. --limit 50",
        "GET",
        "/teams/ops/audit",
        None,
        {"since": ["7d"], "actor": ["7"], "action": ["monitor."], "limit": ["50"]},
    ),
]


@pytest.mark.parametrize("line, method, path, body, query", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_each_command_sends_its_request(
    tcli: Cli, stub: ApiStub, line: str, method: str, path: str, body: Any, query: Any
) -> None:
    tcli.ok("--team", "ops", *line.split())
    sent = only(stub, method, path)
    assert sent.body == body
    assert sent.query == query
    assert sent.team == "ops"
    others = [r.path for r in stub.requests if r is not sent]
    assert others == (["/auth/user"] if line == "teams leave" else [])


@pytest.mark.parametrize("line, method, path, body, query", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_json_prints_the_api_data(
    tcli: Cli, stub: ApiStub, line: str, method: str, path: str, body: Any, query: Any
) -> None:
    result = tcli.ok("--team", "ops", *line.split(), "--json")
    _, answer = stub.routes[(method, path)]  # type: ignore[misc]
    data = answer["data"]
    # lists as {"data": [...]}, one object (or a message) as itself
    assert json.loads(result.stdout) == ({"data": data} if isinstance(data, list) else data)


def test_global_json_works_too(tcli: Cli) -> None:
    result = tcli.ok("--json", "--team", "ops", "teams", "members")
    assert json.loads(result.stdout) == {"data": [MEMBER]}


@pytest.mark.parametrize(
    "line, path",
    [
        ("teams members", "/teams/{}/members"),
        ("teams invitations", "/teams/{}/invitations"),
        ("teams revoke 5", "/teams/{}/invitations/5"),
        ("teams role 8 admin", "/teams/{}/members/8"),
        ("audit", "/teams/{}/audit"),
    ],
)
def test_team_scoped_commands_take_a_local_team(
    tcli: Cli, stub: ApiStub, line: str, path: str
) -> None:
    tcli(*line.split(), "--team", "ops", env={"UPTIME_TEAM": "dev"})
    sent = stub.last()
    assert (sent.path, sent.team) == (path.format("ops"), "ops")  # the local option wins
    stub.reset()
    tcli(*line.split(), env={"UPTIME_TEAM": "dev"})
    assert (stub.last().path, stub.last().team) == (path.format("dev"), "dev")


def test_without_a_chosen_team_the_servers_is_used(tcli: Cli, stub: ApiStub) -> None:
    result = tcli.ok("audit", "--json")
    assert json.loads(result.stdout) == {"data": []}
    assert [(r.path, r.team) for r in stub.requests] == [
        ("/auth/user", None),
        ("/teams/alice/audit", None),
    ]
    stub.reset()
    shown = tcli.ok("teams", "show", "--json")
    assert json.loads(shown.stdout) == PERSONAL
    assert [r.path for r in stub.requests] == ["/auth/user", "/teams/alice"]


def test_a_server_without_teams_asks_for_one(tcli: Cli, stub: ApiStub) -> None:
    stub.route("GET", "/auth/user", {k: v for k, v in USER.items() if k not in ("team", "role")})
    result = tcli("teams", "members")
    assert result.exit_code == ERROR, describe(result)
    assert "give --team SLUG" in result.stderr
    assert [r.path for r in stub.requests] == ["/auth/user"]


# -- particular commands -----------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "abc123",
        " abc123\n",
        "https://uptime.example.com/invite/abc123",
        "https://uptime.example.com/base/invite/abc123/",
        "http://127.0.0.1:8080/invite/abc123?utm=mail#top",
    ],
)
def test_join_takes_a_token_or_its_link(tcli: Cli, stub: ApiStub, given: str) -> None:
    result = tcli.ok("teams", "join", given)
    assert only(stub, "POST", "/invitations/accept").body == {"token": "abc123"}
    assert "Joined team Ops (ops) as member" in result.stderr
    assert "uptime teams switch ops" in result.stderr


def test_join_refuses_what_is_no_token(tcli: Cli, stub: ApiStub) -> None:
    result = tcli("teams", "join", "two words")
    assert result.exit_code == USAGE, describe(result)
    assert stub.requests == []
    with pytest.raises(Exception, match="expected an invitation token"):
        invitation_token("https://x/invite/")


def test_join_of_a_used_invitation_is_refused(tcli: Cli, stub: ApiStub) -> None:
    error = {"code": "NOT_FOUND", "message": "Invitation not found or expired"}
    stub.answer("POST", "/invitations/accept", (404, {"error": error}))
    result = tcli("teams", "join", "abc123")
    assert result.exit_code == REFUSED
    assert "Invitation not found or expired" in result.stderr


def test_leave_removes_yourself_and_clears_that_default(
    tcli: Cli, stub: ApiStub, config_dir: Path
) -> None:
    tcli.ok("teams", "switch", "ops")
    stub.reset()
    result = tcli.ok("teams", "leave")
    assert [(r.method, r.path, r.team) for r in stub.requests] == [
        ("GET", "/auth/user", "ops"),
        ("DELETE", "/teams/ops/members/7", "ops"),
    ]
    assert "Left team ops" in result.stderr
    assert credentials.saved_team(stub.url, config_dir) is None
    tcli.ok("whoami")
    assert stub.last().team is None


def test_last_owner_cannot_leave(tcli: Cli, stub: ApiStub) -> None:
    error = {"code": "LAST_OWNER", "message": "A team needs an owner"}
    stub.answer("DELETE", "/teams/ops/members/7", (409, {"error": error}))
    result = tcli("--team", "ops", "teams", "leave")
    assert result.exit_code == REFUSED
    assert "LAST_OWNER: A team needs an owner" in result.stderr


def test_delete_asks_first(tcli: Cli, stub: ApiStub) -> None:
    refused = tcli("teams", "delete", "ops", input="n\n")
    assert refused.exit_code == 1, describe(refused)
    assert "Delete team ops" in refused.stderr
    assert stub.seen("DELETE") == []

    agreed = tcli("teams", "delete", "ops", input="y\n")
    assert agreed.exit_code == 0, describe(agreed)
    assert len(stub.seen("DELETE", "/teams/ops")) == 1
    assert "Deleted team ops" in agreed.stderr


def test_deleting_the_default_team_clears_it(tcli: Cli, stub: ApiStub, config_dir: Path) -> None:
    tcli.ok("teams", "switch", "ops")
    result = tcli.ok("teams", "delete", "ops", "--yes")
    assert "Delete team" not in result.stderr  # no question
    assert credentials.saved_team(stub.url, config_dir) is None


def test_renaming_the_default_team_follows_its_new_slug(
    tcli: Cli, stub: ApiStub, config_dir: Path
) -> None:
    tcli.ok("teams", "switch", "ops")
    result = tcli.ok("teams", "rename", "ops", "Operations", "--slug", "operations")
    assert "Updated team Operations (operations)" in result.stderr
    assert credentials.saved_team(stub.url, config_dir) == "operations"


def test_switch_warns_when_something_else_wins(tcli: Cli, stub: ApiStub) -> None:
    result = tcli.ok("teams", "switch", "ops", env={"UPTIME_TEAM": "dev"})
    assert "now act in team Ops (ops)" in result.stderr
    assert "UPTIME_TEAM names team 'dev'" in result.stderr


def test_whoami_shows_the_team_and_role(tcli: Cli, stub: ApiStub) -> None:
    result = tcli.ok("whoami")
    assert "Alice (alice)" in result.stdout
    assert "Role" in result.stdout and "owner" in result.stdout
    assert json.loads(tcli.ok("whoami", "--json").stdout) == USER


def test_whoami_of_an_older_server_has_no_team(tcli: Cli, stub: ApiStub) -> None:
    stub.route("GET", "/auth/user", {k: v for k, v in USER.items() if k not in ("team", "role")})
    result = tcli.ok("whoami")
    assert "alice@example.com" in result.stdout
    assert "Team" not in result.stdout and "Role" not in result.stdout


def test_tables(tcli: Cli) -> None:
    listed = tcli.ok("--team", "ops", "teams", "list").stdout
    assert "SLUG" in listed and "Ops" in listed and "alice" in listed
    assert [line.split()[0] for line in listed.splitlines() if "ops" in line] == ["*"]
    members = tcli.ok("--team", "ops", "teams", "members").stdout
    assert "bob@example.com" in members and "member" in members
    invitations = tcli.ok("--team", "ops", "teams", "invitations").stdout
    assert "carol@example.com" in invitations and "Alice (7)" in invitations
    events = tcli.ok("--team", "ops", "audit").stdout
    assert "member.role" in events and "token 5" in events and "user 8" in events
    assert "from: member, to: admin" in events


def test_empty_lists_say_so_on_stderr(tcli: Cli, stub: ApiStub) -> None:
    stub.route("GET", "/teams/ops/invitations", [])
    result = tcli.ok("--team", "ops", "teams", "invitations")
    assert result.stdout == ""
    assert "No invitations in team ops" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["teams", "invite", "x@example.com", "--role", "boss"],
        ["teams", "role", "8", "king"],
        ["teams", "remove", "0"],
        ["audit", "--limit", "0"],
        ["audit", "--limit", "1001"],
        ["audit", "--actor", "me"],
    ],
)
def test_usage_errors(tcli: Cli, stub: ApiStub, args: list[str]) -> None:
    result = tcli("--team", "ops", *args)
    assert result.exit_code == USAGE, describe(result)
    assert stub.requests == []
