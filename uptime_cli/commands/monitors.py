"""``uptime monitors ...``: create, inspect, change and check monitors.

Read-only views of a monitor's data (stats, history, alerts) live in
``monitor_data``, registered on the same sub-app.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import typer
from rich.text import Text

from uptime_cli import output
from uptime_cli.client import ApiClient
from uptime_cli.commands import monitor_badges, monitor_data
from uptime_cli.commands.options import (
    JsonFlag,
    MonitorId,
    PageOpt,
    TagFilterOpt,
    parse_assignment,
    tag_option,
    with_monitor_options,
)
from uptime_cli.context import ERROR, CliError, state

app = typer.Typer(help="Create, inspect, change and check monitors.", no_args_is_help=True)

PASSING = ("online", "warning")
ALL_PAGE_SIZE = 100


ListStatus = Literal["online", "offline", "warning", "pending", "maintenance"]
ListType = Literal["http", "https", "tcp", "udp", "ping", "dns", "heartbeat"]
# A URL of these schemes makes a monitor of that type unless --type says otherwise.
_SCHEME_TYPES = ("http", "https", "tcp", "udp", "dns", "ping")


@app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[ListStatus | None, typer.Option(help="Only monitors in this status.")] = None,
    search: Annotated[str | None, typer.Option(help="Text in the name or URL.")] = None,
    type_: Annotated[ListType | None, typer.Option("--type", help="Only this type.")] = None,
    tag: TagFilterOpt = None,
    page: PageOpt = None,
    limit: Annotated[int | None, typer.Option(help="Per page (1-100).", min=1, max=100)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Fetch every page.")] = False,
    json_: JsonFlag = False,
) -> None:
    """List your monitors with their status, uptime and response time."""
    st = state(ctx)
    filters = {
        "status": status,
        "search": search,
        "type": type_,
        "tag": tag or None,
    }
    if all_:
        body = all_pages(st.client(), limit or ALL_PAGE_SIZE, filters)
    else:
        body = st.client().list_monitors(page=page, limit=limit, **filters)
    items, pagination = body.get("data") or [], body.get("pagination")
    if st.wants_json(json_):
        output.print_json({"data": items, "pagination": pagination})
        return
    if not items:
        output.info(_nothing_listed(pagination or {}, any(filters.values())))
        return
    output.out().print(output.monitors_table(items))
    footer = output.page_footer(pagination, len(items))
    if footer and not all_:
        output.info(footer)


def _nothing_listed(pagination: dict[str, Any], filtered: bool) -> str:
    if pagination.get("total"):
        return (
            f"No monitors on page {pagination.get('page')} (there are {pagination.get('pages')})."
        )
    if filtered:
        return "No monitors match."
    return "No monitors yet. Add one with: uptime monitors add NAME URL"


def all_pages(client: ApiClient, limit: int, filters: dict[str, Any]) -> dict[str, Any]:
    """Every page, presented as one page holding everything."""
    items: dict[int, dict[str, Any]] = {}
    page, pages = 1, 1
    while page <= pages:
        body = client.list_monitors(page=page, limit=limit, **filters)
        for item in body.get("data") or []:
            items.setdefault(item["id"], item)  # a monitor added meanwhile may shift pages
        pages = (body.get("pagination") or {}).get("pages") or 0
        page += 1
    data = sorted(items.values(), key=lambda m: m["id"])
    pagination = {"page": 1, "limit": len(data), "total": len(data), "pages": 1 if data else 0}
    return {"data": data, "pagination": pagination}


@app.command()
@with_monitor_options
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A name for the monitor.", show_default=False)],
    url: Annotated[
        str | None,
        typer.Argument(
            help="The URL to check (tcp://host:port, udp://host:port, dns://name, "
            "ping://host; with --type, host:port will do for tcp and udp, the name or "
            "host alone for dns and ping). "
            "None for heartbeat monitors: the job pings them.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Create a monitor; prints its id (a heartbeat's: its ping URL).

    Unset options take the server's defaults. A heartbeat monitor:
    ``uptime monitors add backup --type heartbeat --period 1d --grace 1h``, or
    ``--cron '0 3 * * *' --timezone Europe/Berlin``.
    """
    st = state(ctx)
    heartbeat = fields.get("type") == "heartbeat" or (
        url is None and ("period" in fields or "cron" in fields)
    )
    if heartbeat:
        fields["type"] = "heartbeat"
        if url is not None:
            raise typer.BadParameter("a heartbeat monitor has no URL", param_hint="'URL'")
        fields = {"name": name, **fields}
    else:
        if url is None:
            raise typer.BadParameter("missing the URL to check", param_hint="'URL'")
        scheme = urlsplit(url).scheme.lower() if "://" in url else ""
        kind = fields.setdefault("type", scheme if scheme in _SCHEME_TYPES else "http")
        if kind in ("dns", "ping") and "://" not in url:
            url = f"{kind}://{url}"  # `add gw 192.0.2.1 --type ping` names the host alone
        fields = {"name": name, "url": url, **fields}
    data = st.client().create_monitor(fields).get("data") or {}
    output.show(
        st.wants_json(json_),
        data,
        lambda d: Text(str(d.get("ping_url") if heartbeat else d.get("id"))),
        done=f"Created monitor {data.get('id')} ({data.get('name')}), status {data.get('status')}"
        + (". Have the job request its ping URL (printed above)" if heartbeat else ""),
    )


@app.command()
def show(ctx: typer.Context, monitor_id: MonitorId, json_: JsonFlag = False) -> None:
    """Show a monitor's configuration, state and alert settings.

    With --json, prints the monitor object only (alert settings:
    ``uptime monitors alerts ID --json``).
    """
    st = state(ctx)
    client = st.client()
    monitor = client.get_monitor(monitor_id).get("data") or {}
    if st.wants_json(json_):
        output.print_json(monitor)
        return
    alerts = client.get_alerts(monitor_id).get("data") or {}
    console = output.out()
    console.print(output.monitor_view(monitor))
    console.print()
    console.print(output.alerts_view(alerts))


@app.command()
@with_monitor_options
def edit(
    ctx: typer.Context,
    monitor_id: MonitorId,
    name: Annotated[str | None, typer.Option(help="New name.")] = None,
    url: Annotated[str | None, typer.Option(help="New URL.")] = None,
    no_depends_on: Annotated[
        bool, typer.Option("--no-depends-on", help="Clear the list of monitors it depends on.")
    ] = False,
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Change a monitor; only the options given are sent."""
    st = state(ctx)
    if name is not None:
        fields["name"] = name
    if url is not None:
        fields["url"] = url
    if no_depends_on:
        if "depends_on" in fields:
            raise typer.BadParameter(
                "give --depends-on or --no-depends-on, not both", param_hint="'--no-depends-on'"
            )
        fields["depends_on"] = []
    if not fields:
        raise typer.BadParameter("give at least one option to change", param_hint="'OPTIONS'")
    data = st.client().update_monitor(monitor_id, fields).get("data") or {}
    output.show(
        st.wants_json(json_),
        data,
        output.monitor_view,
        done=f"Updated monitor {monitor_id}: {', '.join(sorted(fields))}",
    )


@app.command()
def deps(ctx: typer.Context, monitor_id: MonitorId, json_: JsonFlag = False) -> None:
    """Show what a monitor depends on (above it) and what depends on it (below), with statuses.

    A blocked monitor (one it depends on is down) is marked so.
    """
    st = state(ctx)
    data = st.client().monitor_dependencies(monitor_id).get("data") or {}
    output.show(st.wants_json(json_), data, output.dependencies_view)


@app.command()
def rm(
    ctx: typer.Context,
    monitor_id: MonitorId,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Delete a monitor with its history, statistics and notifications."""
    st = state(ctx)
    client = st.client()
    if not yes:
        monitor = client.get_monitor(monitor_id).get("data") or {}
        typer.confirm(
            f"Delete monitor {monitor_id} ({monitor.get('name')}) and all its history?",
            abort=True,
            err=True,
        )
    response = client.delete_monitor(monitor_id)
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Deleted monitor {monitor_id}")


@app.command()
def pause(
    ctx: typer.Context,
    monitor_id: MonitorId,
    reason: Annotated[str | None, typer.Option(help="Why (shown on the monitor).")] = None,
    json_: JsonFlag = False,
) -> None:
    """Stop checking a monitor until it is resumed."""
    st = state(ctx)
    data = st.client().pause_monitor(monitor_id, reason).get("data") or {}
    done = f"Paused monitor {monitor_id} ({data.get('name')})"
    output.show(st.wants_json(json_), data, done=done)


@app.command()
def resume(ctx: typer.Context, monitor_id: MonitorId, json_: JsonFlag = False) -> None:
    """Resume checking a paused monitor (checked again at once)."""
    st = state(ctx)
    data = st.client().resume_monitor(monitor_id).get("data") or {}
    done = f"Resumed monitor {monitor_id} ({data.get('name')}), status {data.get('status')}"
    output.show(st.wants_json(json_), data, done=done)


@app.command()
def test(ctx: typer.Context, monitor_id: MonitorId, json_: JsonFlag = False) -> None:
    """Run one check now; exit 0 if it passed, 1 if it failed."""
    st = state(ctx)
    client = st.client()
    as_json = st.wants_json(json_)
    # The run's result does not say what was checked: people see the monitor's
    # type and target, and an HTTP status only where the type has one.
    monitor = None if as_json else client.get_monitor(monitor_id).get("data") or {}
    with output.err().status(f"Checking monitor {monitor_id}…"):
        data = client.test_monitor(monitor_id).get("data") or {}
    output.show(as_json, data, lambda d: output.test_result_view(d, monitor))
    if data.get("status") not in PASSING:
        raise typer.Exit(ERROR)


@app.command("rotate-ping-token")
def rotate_ping_token(ctx: typer.Context, monitor_id: MonitorId, json_: JsonFlag = False) -> None:
    """Give a heartbeat monitor a new ping URL (prints it); the old one stops working at once."""
    st = state(ctx)
    data = st.client().rotate_ping_token(monitor_id).get("data") or {}
    output.show(
        st.wants_json(json_),
        data,
        lambda d: Text(str(d.get("ping_url"))),
        done=f"New ping URL for monitor {monitor_id} ({data.get('name')}); the old one is dead",
    )


BulkAction = Literal["pause", "resume", "delete", "update"]
BulkTagOpt = tag_option("Instead of ids: your monitors with this tag (repeat: all).")


@app.command()
def bulk(
    ctx: typer.Context,
    action: Annotated[BulkAction, typer.Argument(help="What to do.", show_default=False)],
    monitor_ids: Annotated[
        list[int] | None,
        typer.Argument(help="Monitor ids (1-100); or --tag.", metavar="ID", show_default=False),
    ] = None,
    tag: BulkTagOpt = None,
    reason: Annotated[str | None, typer.Option(help="With pause: why.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="FIELD=VALUE",
            help="With update: a field to set; VALUE is JSON when it parses, else text.",
        ),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="With delete: do not ask.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Pause, resume, delete or update several monitors at once; exit 1 if any failed."""
    st = state(ctx)
    if bool(monitor_ids) == bool(tag):
        raise typer.BadParameter("give monitor ids or --tag, not both", param_hint="'ID...'")
    what = f"{len(monitor_ids)} monitor(s)" if monitor_ids else f"every monitor tagged {tag}"
    settings = dict(parse_assignment(item) for item in set_ or [])
    if action == "update" and not settings:
        raise typer.BadParameter(
            "update needs at least one --set field=value", param_hint="'--set'"
        )
    if action != "update" and settings:
        raise typer.BadParameter("--set goes with update only", param_hint="'--set'")
    if action == "delete" and not yes:
        typer.confirm(f"Delete {what} and all their history?", abort=True, err=True)
    ids = list(monitor_ids or ())
    response = st.client().bulk(action, ids, tag=tag, reason=reason, settings=settings or None)
    data = response.get("data") or {}
    output.show(st.wants_json(json_), data, output.bulk_view)
    failed = data.get("failed") or []
    if failed:
        total = len(failed) + len(data.get("succeeded") or [])
        raise CliError(f"{len(failed)} of {total} monitor(s) failed")


monitor_data.register(app)
monitor_badges.register(app)
