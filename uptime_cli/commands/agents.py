"""``uptime agents create|list|revoke``: probe agents through the API (admins only).

The server lets admins manage agents (``uptime whoami`` says whether you are
one); creating and revoking take a signed-in session (``uptime login``), not
an API token. On the server's own machine ``uptime server agent-token`` and
``uptime server agents`` need no sign-in (docs/agents.md).
"""

from __future__ import annotations

from typing import Annotated

import typer

from uptime_cli import output
from uptime_cli.commands.options import ExpiresOpt, JsonFlag, expires_in
from uptime_cli.context import state

app = typer.Typer(help="Probe agents: tokens per location (admins).", no_args_is_help=True)


@app.command()
def create(
    ctx: typer.Context,
    location: Annotated[str, typer.Option(help="The location it runs checks of.")],
    name: Annotated[str | None, typer.Option(help="A name to tell agents apart.")] = None,
    expires: ExpiresOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Create an agent token for a location and print it; it is shown this once."""
    st = state(ctx)
    data = st.client().create_agent(location, name, expires_in(expires)).get("data") or {}
    if st.wants_json(json_):
        output.print_json(data)
        return
    typer.echo(data.get("token", ""))
    expiry = output.when(data.get("expires_at")) if data.get("expires_at") else "never"
    output.success(
        f"Created agent {data.get('id')} ({data.get('name')}) for {data.get('location')}; "
        f"expires: {expiry}. The token is shown only now: "
        "uptime agent run --server URL --token TOKEN"
    )


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Agents: location, version, last seen, checks per second, lag and degraded."""
    st = state(ctx)
    items = st.client().list_agents().get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info("No probe agents. Create one with: uptime agents create --location L")
    else:
        output.out().print(output.agents_table(items))


@app.command()
def revoke(
    ctx: typer.Context,
    agent_id: Annotated[int, typer.Argument(help="The agent's id.")],
    json_: JsonFlag = False,
) -> None:
    """Revoke an agent's token: its next call is refused."""
    st = state(ctx)
    data = st.client().revoke_agent(agent_id)
    output.show(st.wants_json(json_), data, done=f"Agent {agent_id} revoked")
