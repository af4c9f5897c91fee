"""``uptime notifications ...``: incidents and recoveries, acknowledged and resolved."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer
from rich.console import Group

from uptime_cli import output
from uptime_cli.commands.options import JsonFlag, PageOpt, parse_when
from uptime_cli.context import state

app = typer.Typer(
    help="Downtime, recovery and certificate-expiry notifications.", no_args_is_help=True
)

NotificationId = Annotated[
    int, typer.Argument(help="The notification's id.", min=1, show_default=False)
]
LimitOpt = Annotated[int | None, typer.Option(help="Per page (1-100).", min=1, max=100)]


Kind = Literal["downtime", "recovery", "cert_expiry", "reminder", "flapping", "flapping_settled"]
State = Literal["active", "resolved"]


@app.command("list")
def list_(
    ctx: typer.Context,
    monitor: Annotated[int | None, typer.Option(help="Only this monitor's.", min=1)] = None,
    type_: Annotated[
        Kind | None,
        typer.Option(
            "--type",
            help="downtime, recovery, cert_expiry, reminder, flapping or flapping_settled.",
        ),
    ] = None,
    status: Annotated[State | None, typer.Option(help="active or resolved.")] = None,
    since: Annotated[
        str | None, typer.Option(help="Started at or after: ISO 8601 or a span like 2h, 7d.")
    ] = None,
    suppressed: Annotated[
        bool | None,
        typer.Option(
            "--suppressed/--not-suppressed",
            help="Only suppressed ones (a blocked monitor's, no alert sent), or only the others.",
        ),
    ] = None,
    page: PageOpt = None,
    limit: LimitOpt = None,
    json_: JsonFlag = False,
) -> None:
    """All notifications, newest first."""
    st = state(ctx)
    body = st.client().list_notifications(
        page=page,
        limit=limit,
        monitor_id=monitor,
        type=type_,
        status=status,
        since=parse_when(since, "--since"),
        suppressed=suppressed,
    )
    _render_list(st.wants_json(json_), body, "pagination")


@app.command()
def active(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Unresolved notifications: what is down right now."""
    st = state(ctx)
    _render_list(st.wants_json(json_), st.client().active_notifications(), "meta")


@app.command()
def recent(
    ctx: typer.Context, page: PageOpt = None, limit: LimitOpt = None, json_: JsonFlag = False
) -> None:
    """Notifications of the last 24 hours."""
    st = state(ctx)
    body = st.client().recent_notifications(page=page, limit=limit)
    _render_list(st.wants_json(json_), body, "pagination")


def _render_list(as_json: bool, body: dict[str, Any], extra: str) -> None:
    items = body.get("data") or []
    if as_json:
        output.print_json({"data": items, extra: body.get(extra)})
        return
    if not items:
        output.info("No notifications.")
        return
    output.out().print(output.notifications_table(items))
    if extra == "pagination":
        footer = output.page_footer(body.get(extra), len(items))
        if footer:
            output.info(footer)


@app.command()
def show(ctx: typer.Context, notification_id: NotificationId, json_: JsonFlag = False) -> None:
    """One notification in full: monitor, timings, error, each channel's delivery."""
    st = state(ctx)
    data = st.client().get_notification(notification_id).get("data") or {}
    output.show(st.wants_json(json_), data, _detail_view)


def _detail_view(data: dict[str, Any]) -> Any:
    if not data.get("deliveries"):
        return output.notification_view(data)
    return Group(output.notification_view(data), "", output.deliveries_table(data["deliveries"]))


@app.command()
def ack(ctx: typer.Context, notification_id: NotificationId, json_: JsonFlag = False) -> None:
    """Acknowledge an active notification (it stays active until resolved)."""
    st = state(ctx)
    data = st.client().acknowledge_notification(notification_id).get("data") or {}
    done = (
        f"Acknowledged notification {notification_id} at {output.when(data.get('acknowledged_at'))}"
    )
    output.show(st.wants_json(json_), data, done=done)


@app.command()
def resolve(ctx: typer.Context, notification_id: NotificationId, json_: JsonFlag = False) -> None:
    """Resolve an active notification by hand."""
    st = state(ctx)
    data = st.client().resolve_notification(notification_id).get("data") or {}
    done = f"Resolved notification {notification_id} at {output.when(data.get('resolved_at'))}"
    output.show(st.wants_json(json_), data, done=done)
