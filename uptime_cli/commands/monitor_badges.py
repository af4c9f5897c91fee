"""``uptime monitors badges ID``: public badges on or off, a new token, Markdown snippets."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from uptime_cli import output
from uptime_cli.commands.options import JsonFlag, MonitorId
from uptime_cli.context import state

BADGES = (
    ("status", "status.svg"),
    ("uptime 24h", "uptime-24h.svg"),
    ("uptime 7d", "uptime-7d.svg"),
    ("uptime 30d", "uptime-30d.svg"),
    ("uptime 90d", "uptime-90d.svg"),
    ("response time", "response-time.svg"),
)


def register(app: typer.Typer) -> None:
    app.command()(badges)


def badges(
    ctx: typer.Context,
    monitor_id: MonitorId,
    enable: Annotated[
        bool | None,
        typer.Option("--enable/--disable", help="Turn the public badges on or off."),
    ] = None,
    rotate: Annotated[
        bool, typer.Option("--rotate", help="A new token: links with the old one stop working.")
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Print Markdown for a monitor's badges (--enable turns them on)."""
    st = state(ctx)
    client = st.client()
    if enable is not None:
        monitor = client.update_monitor(monitor_id, {"badges": enable}).get("data") or {}
    else:
        monitor = client.get_monitor(monitor_id).get("data") or {}
    if rotate:
        monitor = client.rotate_badge_token(monitor_id).get("data") or {}
    token = monitor.get("badge_token") if monitor.get("badges") else None
    urls = {name: f"{client.server}/badge/{token}/{path}" for name, path in BADGES} if token else {}
    if st.wants_json(json_):
        output.print_json(_summary(monitor_id, token, urls))
        return
    if not token:
        output.info(
            f"Badges are off for monitor {monitor_id}: uptime monitors badges {monitor_id} --enable"
        )
        return
    name = monitor.get("name") or "monitor"
    for label, url in urls.items():
        typer.echo(f"![{name} {label}]({url})")
    if rotate:
        output.success("New badge token: links with the old one answer 404 now")


def _summary(monitor_id: int, token: str | None, urls: dict[str, str]) -> dict[str, Any]:
    return {"monitor_id": monitor_id, "badges": bool(token), "badge_token": token, "urls": urls}
