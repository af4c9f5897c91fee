"""What every command runs with: server, session, team, output mode; exit codes.

The root callback builds one ``CliState`` from the global options and puts it
on the Typer context; commands ask it for an ``ApiClient`` and whether to
print JSON.

The team a request acts in (the ``X-Uptime-Team`` header) is ``--team`` >
``UPTIME_TEAM`` > the default saved for the server by ``uptime teams switch``;
with none of them the server picks (the user's personal team, or a token's own).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cached_property

import typer

from uptime_cli import credentials
from uptime_cli.client import ApiClient
from uptime_cli.output import printable

# Exit codes (README.md#command-line).
OK = 0
ERROR = 1
USAGE = 2
UNREACHABLE = 3
REFUSED = 4
SERVER_ERROR = 5
INTERRUPTED = 130


class CliError(Exception):
    """A failure the user can act on: one line on stderr, then exit *code*."""

    def __init__(self, message: str, code: int = ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class CliState:
    server_option: str | None = None
    json: bool = False
    debug: bool = False
    timeout: float | None = None  # --timeout / UPTIME_TIMEOUT, when given
    team_option: str | None = None  # the root's --team

    @cached_property
    def server(self) -> str:
        """--server / UPTIME_SERVER, else the server of the saved login, else the default."""
        chosen = self.server_option or credentials.default_server() or credentials.DEFAULT_SERVER
        try:
            return credentials.normalise_server(chosen)
        except credentials.BadServerUrl as exc:
            raise typer.BadParameter(str(exc), param_hint="'--server'") from None

    @property
    def server_is_explicit(self) -> bool:
        return bool(self.server_option)

    @property
    def team_choice(self) -> tuple[str, str] | None:
        """(team id or slug, where it came from: "--team", UPTIME_TEAM or "saved"), if any."""
        if self.team_option and self.team_option.strip():
            return self.team_option.strip(), "--team"
        from_env = credentials.env_value(credentials.TEAM_ENV)
        if from_env:
            return from_env, credentials.TEAM_ENV
        saved = credentials.saved_team(self.server)
        return (saved, "saved") if saved else None

    @property
    def team(self) -> str | None:
        """The team chosen for requests (None: the server's default for the caller)."""
        choice = self.team_choice
        return choice[0] if choice else None

    def credential(self) -> credentials.Credential | None:
        """UPTIME_TOKEN, UPTIME_SESSION or the saved session (credentials.select)."""
        return credentials.select(self.server)

    def client(self, session: str | None = None, *, team: str | None = None) -> ApiClient:
        """A client with *session* if given ("" for none), else the selected credential.

        Its requests name *team* if given (a command's own --team), else ``self.team``.
        """
        chosen = self.credential() if session is None else None
        token = chosen.value if chosen and chosen.kind == "token" else None
        if session is None and chosen and chosen.kind == "session":
            session = chosen.value
        client = ApiClient(
            self.server,
            session=session,
            token=token,
            team=team or self.team,
            trace=self._trace if self.debug else None,
        )
        if self.timeout is not None:  # a given timeout bounds every call, checks included
            client.timeout = client.check_timeout = self.timeout
        return client

    def wants_json(self, local_flag: bool) -> bool:
        return self.json or local_flag

    @staticmethod
    def _trace(line: str) -> None:
        # The reason phrase is the server's text.
        sys.stderr.write(f"[http] {printable(line)}\n")


def state(ctx: typer.Context) -> CliState:
    """The CliState of the root command (a default one outside the app)."""
    root = ctx.find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj
