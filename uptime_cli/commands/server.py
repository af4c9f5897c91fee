"""``uptime server ...``: the local daemon commands (need file access to the DB)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from uptime_cli.commands.options import ExpiresOpt, expires_in

if TYPE_CHECKING:  # the server modules are imported lazily: they keep the client fast
    from uptime_server.config import Settings

app = typer.Typer(help="Run and administer the local daemon.", no_args_is_help=True)

LocationOpt = Annotated[str | None, typer.Option(help="Run only the checks of this location.")]


@contextmanager
def _startup_errors() -> Iterator[None]:
    """Turn what commonly stops start-up into one line on stderr and exit 1."""
    import peewee

    from uptime_server.migrations import MigrationError

    try:
        yield
    except MigrationError as exc:  # rolled back whole: the database is as it was
        typer.echo(f"uptime: database migration failed, nothing changed: {exc}", err=True)
        raise typer.Exit(1) from None
    except OSError as exc:  # a port in use, an unwritable data dir, ...
        where = f" ({exc.filename})" if exc.filename else ""
        typer.echo(f"uptime: {exc.strerror or exc}{where}", err=True)
        raise typer.Exit(1) from None
    except peewee.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        typer.echo(f"uptime: cannot open the database (UPTIME_DATABASE_URL): {first}", err=True)
        raise typer.Exit(1) from None


def _settings() -> Settings:
    from uptime_server.config import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        typer.echo(f"uptime: configuration error: {exc}", err=True)
        raise typer.Exit(1) from None


@app.command()
def run(
    host: Annotated[str | None, typer.Option(help="Address to listen on (UPTIME_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on (UPTIME_PORT).")] = None,
    no_api: Annotated[bool, typer.Option("--no-api", help="Do not serve the HTTP API.")] = False,
    no_scheduler: Annotated[
        bool, typer.Option("--no-scheduler", help="Do not run checks or deliveries.")
    ] = False,
    location: LocationOpt = None,
) -> None:
    """Start the daemon: API, check scheduler and notification delivery."""
    from uptime_server.daemon.process import Daemon, DaemonOptions

    settings = _daemon_settings(location)
    options = DaemonOptions(
        api=not no_api, scheduler=not no_scheduler, location=location, host=host, port=port
    )
    with _startup_errors():
        code = Daemon(settings, options).run()
    raise typer.Exit(code)


def _daemon_settings(location: str | None) -> Settings:
    """Settings for running checks (of *location*, when given), with logging set up."""
    from uptime_server.daemon.process import configure_logging

    settings = _settings()
    configure_logging(settings.log_level)
    if location is not None and location not in settings.locations:
        typer.echo(
            f"uptime: unknown location {location!r}; UPTIME_LOCATIONS has "
            f"{', '.join(settings.locations)}",
            err=True,
        )
        raise typer.Exit(2)
    return settings


@app.command()
def check(
    once: Annotated[
        bool, typer.Option("--once", help="Run every due check once, then exit (for cron).")
    ] = False,
    location: LocationOpt = None,
) -> None:
    """Cron mode: run every due check once, deliver what is pending, and exit."""
    from uptime_server.daemon.process import DaemonOptions, run_once

    if not once:
        typer.echo("uptime: use --once (the daemon is `uptime server run`)", err=True)
        raise typer.Exit(2)
    settings = _daemon_settings(location)
    with _startup_errors():
        code = run_once(settings, DaemonOptions(api=False, location=location))
    raise typer.Exit(code)


@app.command()
def migrate() -> None:
    """Apply pending database migrations and exit."""
    from uptime_server.daemon.process import prepare

    with _startup_errors():
        prepare(_settings())
    typer.echo("Database is up to date.", err=True)


@app.command()
def session(
    email: Annotated[str, typer.Option(help="The user's email address.")],
    name: Annotated[str | None, typer.Option(help="Display name for a new user.")] = None,
) -> None:
    """Create the user if needed and print a new session token."""
    from uptime_server.auth.local_users import mint_local_session
    from uptime_server.daemon.process import prepare

    with _startup_errors():
        settings = prepare(_settings())
    try:
        token = mint_local_session(settings, email=email, name=name)
    except ValueError as exc:
        typer.echo(f"uptime: {exc}", err=True)
        raise typer.Exit(2) from None
    sys.stdout.write(token + "\n")


admin_app = typer.Typer(
    help="Admins, who may manage probe agents: grant, revoke, list (on the server's machine).",
    no_args_is_help=True,
)
app.add_typer(admin_app, name="admin")

UserRef = Annotated[
    str,
    typer.Argument(
        metavar="EMAIL|USER_ID",
        help="The account: its email address, or its user id when several share one.",
        show_default=False,
    ),
]
AdminJson = Annotated[bool, typer.Option("--json", help="Print the account(s) as JSON.")]


@admin_app.command("grant")
def admin_grant(user: UserRef, json_: AdminJson = False) -> None:
    """Make an account an admin (it may manage probe agents through the API)."""
    account, changed, _ = _set_admin(user, True)
    done = "is now an admin" if changed else "was already an admin"
    _show_account(account, json_, f"User {account['id']} ({account['email']}) {done}")


@admin_app.command("revoke")
def admin_revoke(user: UserRef, json_: AdminJson = False) -> None:
    """Take an account's admin rights away (allowed for the last admin too, with a warning)."""
    from uptime_cli import output
    from uptime_server.auth import admins
    from uptime_server.db import database

    account, changed, settings = _set_admin(user, False)
    done = "is no longer an admin" if changed else "was not an admin"
    _show_account(account, json_, f"User {account['id']} ({account['email']}) {done}")
    if account["email"].lower() in settings.admins:
        output.warn(
            f"UPTIME_ADMINS lists {account['email']}: their next sign-in makes them an admin "
            "again; remove the address from UPTIME_ADMINS"
        )
    with database.connection_context():
        left = admins.list_admins()
    if not left:
        output.warn(
            "no admin is left: only `uptime server agent-token`, `agents` and "
            "`revoke-agent` on this machine manage probe agents now"
        )


@admin_app.command("list")
def admin_list(json_: AdminJson = False) -> None:
    """List the admins: id, email, name, sign-in providers, last login."""
    from rich.table import Table

    from uptime_cli import output
    from uptime_server.auth import admins
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database
    from uptime_server.schemas.auth import Account

    with _startup_errors():
        prepare(_settings())
        with database.connection_context():
            items = [Account.of(row).to_json() for row in admins.list_admins()]
    if json_:
        output.print_json({"data": items})
        return
    if not items:
        output.info("No admins. Make one with: uptime server admin grant EMAIL")
        return
    table = Table(box=None, header_style="bold")
    for column in ("ID", "EMAIL", "NAME", "PROVIDERS", "LAST LOGIN"):
        table.add_column(column)
    for a in items:
        table.add_row(
            str(a["id"]),
            output.cell(a["email"]),
            output.cell(a["name"]),
            output.cell(", ".join(a["providers"]) or "local"),
            output.when(a["last_login"]) if a["last_login"] else "never",
        )
    output.out().print(table)


def _set_admin(ref: str, flag: bool) -> tuple[dict[str, Any], bool, Settings]:
    """Set the admin flag of the account *ref* names; (account, changed, settings).

    An unknown or ambiguous account exits 4, as a refused request does.
    """
    from uptime_server.auth import admins
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database, write_tx
    from uptime_server.schemas.auth import Account

    with _startup_errors():
        settings = prepare(_settings())
        with database.connection_context():
            try:
                with write_tx():
                    user = admins.find_user(ref)
                    changed = admins.set_admin(user, flag)
            except (admins.UnknownUser, admins.AmbiguousUser) as exc:
                typer.echo(f"uptime: {exc}", err=True)
                raise typer.Exit(4) from None
            account = Account.of(user).to_json()
    return account, changed, settings


def _show_account(account: dict[str, Any], json_: bool, message: str) -> None:
    from uptime_cli import output

    if json_:
        output.print_json(account)
    output.success(message)


@app.command("agent-token")
def agent_token(
    location: Annotated[
        str, typer.Option(help="The location it runs checks of (UPTIME_LOCATIONS).")
    ],
    name: Annotated[str | None, typer.Option(help="A name to tell agents apart.")] = None,
    expires: ExpiresOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the agent as JSON.")] = False,
) -> None:
    """Create a probe agent's token for one location and print it (shown this once)."""
    from uptime_server.auth import agent_tokens
    from uptime_server.clock import Clock
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database
    from uptime_server.schemas.agents import AgentCreated

    with _startup_errors():
        settings = prepare(_settings())
        try:
            with database.connection_context():
                secret, row = agent_tokens.create_agent(
                    settings,
                    location=location,
                    name=name,
                    now=Clock().now(),
                    expires_in=expires_in(expires),
                )
        except agent_tokens.UnknownLocation as exc:
            typer.echo(f"uptime: {exc}", err=True)
            raise typer.Exit(2) from None
    if json_:
        from uptime_cli import output

        output.print_json(AgentCreated.from_row(row, token=secret).to_json())
        return
    sys.stdout.write(secret + "\n")
    typer.echo(
        f"Agent {row.id} ({row.name}) for location {row.location}; run it with: "
        "uptime agent run --server URL --token TOKEN",
        err=True,
    )


@app.command()
def agents(
    json_: Annotated[bool, typer.Option("--json", help="Print the agents as JSON.")] = False,
) -> None:
    """List probe agents: location, version, last seen, checks per second, lag, degraded."""
    from uptime_cli import output
    from uptime_server.auth import agent_tokens
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database
    from uptime_server.schemas.agents import Agent

    with _startup_errors():
        prepare(_settings())
        with database.connection_context():
            items = [Agent.of(row).to_json() for row in agent_tokens.list_agents()]
    if json_:
        output.print_json({"data": items})
    elif not items:
        output.info("No probe agents. Create one with: uptime server agent-token --location L")
    else:
        output.out().print(output.agents_table(items))


@app.command("revoke-agent")
def revoke_agent(agent_id: Annotated[int, typer.Argument(help="The agent's id.")]) -> None:
    """Revoke a probe agent's token: its next call is refused."""
    from uptime_server.auth import agent_tokens
    from uptime_server.daemon.process import prepare
    from uptime_server.db import database

    with _startup_errors():
        prepare(_settings())
        with database.connection_context():
            found = agent_tokens.revoke_agent(agent_id)
    if not found:
        typer.echo(f"uptime: no agent {agent_id}", err=True)
        raise typer.Exit(4)
    typer.echo(f"Agent {agent_id} revoked", err=True)
