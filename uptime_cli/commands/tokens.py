"""``uptime tokens create|list|revoke``: API tokens for scripts and CI.

Managing tokens takes a signed-in session (``uptime login``): the server
refuses API tokens here, so with UPTIME_TOKEN set these commands are refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from uptime_cli import output
from uptime_cli.commands.options import ExpiresOpt, JsonFlag, expires_in
from uptime_cli.context import state

app = typer.Typer(
    help="API tokens for scripts and CI (use one with UPTIME_TOKEN).", no_args_is_help=True
)

Scope = Literal["read", "write", "admin", "ping"]


@app.command()
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="What the token is for, e.g. ci-deploy.")],
    scope: Annotated[
        Scope,
        typer.Option(
            help="In the current team, at most your role there: read (viewer: every GET); "
            "write (member: monitors, windows, notifications); admin (also channels, "
            "status pages, invitations); ping: heartbeat pings only."
        ),
    ],
    expires: ExpiresOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Create a token and print it; it is shown this once."""
    st = state(ctx)
    data = st.client().create_token(name, scope, expires_in(expires)).get("data") or {}
    if st.wants_json(json_):
        output.print_json(data)
        return
    typer.echo(data.get("token", ""))  # stdout: `export UPTIME_TOKEN=$(uptime tokens create ...)`
    expiry = output.when(data.get("expires_at")) if data.get("expires_at") else "never"
    output.success(
        f"Created {data.get('scope')} token {data.get('id')} ({data.get('name')}); "
        f"expires: {expiry}. It is shown only now: store it as a secret."
    )


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Your tokens: name, scope, prefix and times (never the secrets)."""
    st = state(ctx)
    items = st.client().list_tokens().get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info("No API tokens. Create one with: uptime tokens create NAME --scope read")
    else:
        output.out().print(tokens_table(items))


@app.command()
def revoke(
    ctx: typer.Context,
    token_id: Annotated[int, typer.Argument(help="The token's id.", min=1, show_default=False)],
    json_: JsonFlag = False,
) -> None:
    """Revoke a token: it stops working at once."""
    st = state(ctx)
    response = st.client().revoke_token(token_id)
    output.show(st.wants_json(json_), response, done=f"Revoked token {token_id}")


def tokens_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "NAME", "SCOPE", "PREFIX", "CREATED", "EXPIRES", "LAST USED"):
        table.add_column(name, justify="right" if name == "ID" else "left", overflow="fold")
    for t in items:
        table.add_row(
            output.cell(t.get("id")),
            output.cell(t.get("name")),
            output.cell(t.get("scope")),
            output.cell(f"{t.get('prefix')}…"),
            output.cell(output.short_when(t.get("created_at"))),
            output.cell(output.short_when(t.get("expires_at")) if t.get("expires_at") else "never"),
            output.cell(output.short_when(t.get("last_used_at")) if t.get("last_used_at") else "-"),
        )
    return table
