"""The root ``uptime`` command: global options, sub-apps, errors → exit codes.

Exit codes (README.md#command-line): 0 ok; 1 error; 2 usage error; 3 cannot reach the
server or timed out; 4 the API refused (4xx); 5 server error (5xx);
130 interrupted. Failures print one line on stderr; ``--debug`` adds the
traceback and HTTP traces.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from uptime_cli import __version__, output
from uptime_cli.client import ApiRefused, ServerError, Unreachable
from uptime_cli.commands import (
    agent,
    agents,
    apply,
    auth,
    channels,
    heartbeats,
    maintenance,
    monitors,
    notifications,
    server,
    status_pages,
    teams,
    tokens,
)
from uptime_cli.context import (
    ERROR,
    INTERRUPTED,
    REFUSED,
    SERVER_ERROR,
    UNREACHABLE,
    USAGE,
    CliError,
    CliState,
)
from uptime_cli.credentials import BadServerUrl


class UptimeGroup(TyperGroup):
    """The root group: turns every failure below it into a message and an exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, BrokenPipeError):
            # Typer reports these itself: usage errors (TyperException, the base of
            # its BadParameter and UsageError) with exit 2, a closed pipe quietly.
            raise
        except KeyboardInterrupt:
            sys.stderr.write("\nuptime: interrupted\n")
            raise typer.Exit(INTERRUPTED) from None
        except Exception as exc:  # the one place that reports failures
            debug = bool(ctx.params.get("debug"))
            if debug:
                Console(stderr=True).print_exception()
            raise typer.Exit(report(exc, debug)) from None


def report(exc: Exception, debug: bool) -> int:
    """Print *exc* for a person; return its exit code."""
    if isinstance(exc, ApiRefused):
        output.failure(f"{exc.code}: {exc.message}")
        for field, problems in exc.details.items():
            text = "; ".join(problems) if isinstance(problems, list) else str(problems)
            output.info(f"  {field}: {text}")
        if exc.status == 401:
            output.info("Sign in with: uptime login")
        if exc.code == "TEAM_NOT_FOUND":
            output.info(
                "Pick a team of yours (`uptime teams list`) with --team SLUG, UPTIME_TEAM "
                "or `uptime teams switch SLUG`."
            )
        return REFUSED
    if isinstance(exc, ServerError):
        output.failure(f"server error (HTTP {exc.status} {exc.code}): {exc.message}")
        return SERVER_ERROR
    if isinstance(exc, Unreachable):
        output.failure(str(exc))
        return UNREACHABLE
    if isinstance(exc, CliError):
        output.failure(exc.message)
        return exc.code
    if isinstance(exc, BadServerUrl):
        output.failure(str(exc))
        return USAGE
    output.failure(f"unexpected error: {exc.__class__.__name__}: {exc}")
    if not debug:
        output.info("Run again with --debug for the traceback.")
    return ERROR


app = typer.Typer(
    name="uptime",
    cls=UptimeGroup,
    help="Self-hosted HTTP/HTTPS uptime monitor: daemon and API client.",
    epilog="Scripts and CI: set UPTIME_TOKEN to an API token (uptime tokens create NAME "
    "--scope read|write) and every command uses it instead of the saved session. "
    "UPTIME_SESSION supplies a session token instead; UPTIME_TOKEN wins over both. "
    "UPTIME_TEAM names the team to act in, like --team.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"uptime {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    server_url: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="UPTIME_SERVER",
            metavar="URL",
            help="API server (default: the server of the saved login, else http://127.0.0.1:8080).",
            show_default=False,
        ),
    ] = None,
    team: Annotated[
        str | None,
        typer.Option(
            "--team",
            metavar="SLUG",
            help="The team to act in (id or slug); else UPTIME_TEAM, else the default saved "
            "by `uptime teams switch`, else the server's choice (your personal team).",
            show_default=False,
        ),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print API data as JSON.")] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks and HTTP traces.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            envvar="UPTIME_TIMEOUT",
            min=0.1,
            help="Seconds to wait for the server (default 30; `monitors test`: 120).",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool | None,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = None,
) -> None:
    """uptime: monitors, notifications and the daemon, from the command line.

    Sign in with `uptime login` (or `uptime login --local` next to the daemon),
    then try `uptime monitors add api https://example.com/health`.
    """
    ctx.obj = CliState(
        server_option=server_url, json=json_, debug=debug, timeout=timeout, team_option=team
    )


auth.register(app)
heartbeats.register(app)
apply.register(app)
teams.register(app)
app.add_typer(monitors.app, name="monitors")
app.add_typer(notifications.app, name="notifications")
app.add_typer(tokens.app, name="tokens")
app.add_typer(channels.app, name="channels")
app.add_typer(maintenance.app, name="maintenance")
app.add_typer(server.app, name="server")
app.add_typer(agent.app, name="agent")
app.add_typer(agents.app, name="agents")
app.add_typer(status_pages.app, name="status-pages")
app.add_typer(teams.app, name="teams")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
