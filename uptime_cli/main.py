"""The root ``uptime`` command."""

from __future__ import annotations

import typer

from uptime_cli.commands import server

app = typer.Typer(
    name="uptime",
    help="Self-hosted HTTP/HTTPS uptime monitor: daemon and API client.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(server.app, name="server")


if __name__ == "__main__":
    app()
