"""``uptime agent run``: a probe agent, running one location's checks (docs/agents.md).

It needs no database: only the server's URL and an agent token (from
``uptime server agent-token --location L``). SIGTERM or Ctrl-C stops it
taking new checks, lets running ones finish (up to a grace period), posts
what it can and keeps the rest on disk for the next start.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Run a probe agent (checks of one location, over HTTP).", no_args_is_help=True
)


@app.command()
def run(
    server: Annotated[
        str, typer.Option(help="The uptime server's URL.", envvar="UPTIME_AGENT_SERVER")
    ],
    token: Annotated[
        str,
        typer.Option(
            help="The agent token (upa_...); better from UPTIME_AGENT_TOKEN.",
            envvar="UPTIME_AGENT_TOKEN",
        ),
    ],
    buffer_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where results wait while the server is unreachable "
            "(UPTIME_AGENT_BUFFER_DIR; default: the user data dir's agent-buffer)."
        ),
    ] = None,
    grace: Annotated[
        float, typer.Option(help="Seconds running checks may finish at shutdown.")
    ] = 30.0,
) -> None:
    """Claim, run and report checks of the token's location until stopped."""
    from uptime_server import gc_policy
    from uptime_server.config import ConfigError, load_agent_settings
    from uptime_server.engine.probe_loop import ProbeLoop
    from uptime_server.engine.spec import probe_config
    from uptime_server.probe_agent.buffer import DiskBuffer
    from uptime_server.probe_agent.canary import Canary
    from uptime_server.probe_agent.client import AgentClient, Refused
    from uptime_server.probe_agent.runner import Agent

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = load_agent_settings()
    except ConfigError as exc:
        typer.echo(f"uptime: configuration error: {exc}", err=True)
        raise typer.Exit(1) from None
    if not token.startswith("upa_"):
        typer.echo("uptime: expected an agent token (upa_...)", err=True)
        raise typer.Exit(2)
    buffer = DiskBuffer(buffer_dir or settings.buffer_dir, max_results=settings.buffer_max_results)
    probes = ProbeLoop(
        probe_config(settings), concurrency=settings.check_concurrency, name="agent-probes"
    )
    agent = Agent(
        AgentClient(server, token),
        probes,
        buffer,
        canary=Canary(settings.canary, interval=settings.canary_interval),
        max_pending=settings.check_concurrency,
    )
    gc_policy.apply(settings.gc_threshold)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    logging.getLogger(__name__).info(
        "agent running against %s (buffer %s, %d results waiting)",
        server,
        buffer.directory,
        len(buffer),
    )
    try:
        agent.run(stop, grace=grace)
    except Refused as exc:
        typer.echo(f"uptime: the server refused this agent: {exc}", err=True)
        raise typer.Exit(4) from None
