"""``uptime maintenance ...``: maintenance windows (docs/maintenance.md).

During a window the covered monitors are still checked, but no downtime
opens and nothing is sent; their status shows ``maintenance``. ``uptime
maintenance start --tag web --for 30m`` is for deploy scripts: it creates a
window covering the monitors tagged ``web`` (no schedule of its own) and
opens it at once, on the server's clock, for 30 minutes.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from uptime_cli import output
from uptime_cli.commands.options import JsonFlag, parse_duration, tag_option, with_options
from uptime_cli.context import state

app = typer.Typer(help="Maintenance windows: checks run, alerts hold, uptime leaves them out.")
app.info.no_args_is_help = True

WindowId = Annotated[int, typer.Argument(help="The window's id.", show_default=False)]
TitleOpt = Annotated[str | None, typer.Option(help="What the window is for.")]
MonitorOpt = Annotated[
    list[int] | None,
    typer.Option("--monitor", metavar="ID", help="A monitor id it covers; repeat for more."),
]
CoverTagOpt = tag_option("Covers your monitors carrying this tag; repeat: all of them.")
StartsOpt = Annotated[
    str | None, typer.Option("--starts-at", help="One-off: start, ISO 8601 with a zone.")
]
EndsOpt = Annotated[str | None, typer.Option("--ends-at", help="One-off: end, ISO 8601.")]
RruleOpt = Annotated[
    str | None, typer.Option(help="Recurring: an RRULE, e.g. 'FREQ=WEEKLY;BYDAY=SU;BYHOUR=2'.")
]
CronOpt = Annotated[str | None, typer.Option(help="Recurring: cron, e.g. '0 2 * * 0'.")]
DurationOpt = Annotated[
    int | None,
    typer.Option(
        parser=parse_duration, metavar="DURATION", help="Recurring: each occurrence, e.g. 2h."
    ),
]
TimezoneOpt = Annotated[
    str | None, typer.Option(help="Zone of --rrule and --cron, e.g. Europe/Berlin (UTC).")
]


WINDOW_OPTIONS: dict[str, Any] = {
    "monitor": MonitorOpt,
    "tag": CoverTagOpt,
    "starts_at": StartsOpt,
    "ends_at": EndsOpt,
    "rrule": RruleOpt,
    "cron": CronOpt,
    "duration": DurationOpt,
    "timezone": TimezoneOpt,
}


def _body(**options: Any) -> dict[str, Any]:
    names = {"monitor": "monitor_ids", "tag": "tags"}
    return {
        names.get(name, name): value
        for name, value in options.items()
        if value is not None and value != []
    }


with_window_options = with_options(WINDOW_OPTIONS, lambda given: _body(**given), "fields")


def window_view(w: dict[str, Any]) -> Any:
    if w.get("rrule") or w.get("cron"):
        schedule = f"{w.get('rrule') or w.get('cron')} ({w.get('timezone')}), "
        schedule += output.duration(w.get("duration"))
    elif w.get("starts_at"):
        schedule = f"{output.when(w.get('starts_at'))} to {output.when(w.get('ends_at'))}"
    else:
        schedule = "by hand only"
    active = "yes" if w.get("active") else "no"
    if w.get("active"):
        active += (
            f", until {output.when(w.get('active_until')) if w.get('active_until') else 'ended'}"
        )
    rows = [
        ("Monitors", ", ".join(str(m) for m in w.get("monitor_ids") or []) or "-"),
        ("Tags", ", ".join(w.get("tags") or []) or "-"),
        ("Schedule", schedule),
        ("Active", active),
        ("Next start", output.when(w.get("next_starts_at"))),
    ]
    return output.key_values(f"Maintenance {w.get('id')}: {w.get('title')}", rows)


def windows_table(items: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "TITLE", "ACTIVE", "COVERS", "NEXT START"):
        table.add_column(name, justify="right" if name == "ID" else "left", overflow="fold")
    for w in items:
        covers = [f"#{m}" for m in w.get("monitor_ids") or []]
        covers += [f"tag:{t}" for t in w.get("tags") or []]
        table.add_row(
            output.cell(w.get("id")),
            output.cell(w.get("title")),
            output.cell("yes" if w.get("active") else "no"),
            output.cell(", ".join(covers)),
            output.cell(output.short_when(w.get("next_starts_at"))),
        )
    return table


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """The caller's maintenance windows."""
    st = state(ctx)
    items = st.client().list_maintenance().get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info("No maintenance windows. Add one with `uptime maintenance add TITLE ...`.")
    else:
        output.out().print(windows_table(items))


@app.command()
@with_window_options
def add(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="What the window is for.")],
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Create a window: one-off (--starts-at, --ends-at), recurring (--rrule or --cron with
    --duration), or none (opened by hand with `start`)."""
    st = state(ctx)
    data = st.client().create_maintenance({"title": title, **fields}).get("data") or {}
    done = f"Added maintenance window {data.get('id')} ({data.get('title')})"
    output.show(st.wants_json(json_), data, window_view, done=done)


@app.command()
def show(ctx: typer.Context, window: WindowId, json_: JsonFlag = False) -> None:
    """One window: what it covers, its schedule, whether it is open now."""
    st = state(ctx)
    data = st.client().get_maintenance(window).get("data") or {}
    output.show(st.wants_json(json_), data, window_view)


@app.command()
@with_window_options
def edit(
    ctx: typer.Context,
    window: WindowId,
    title: TitleOpt = None,
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Change a window; options not given keep their values (a new schedule replaces the old)."""
    st = state(ctx)
    body = _body(title=title, **fields)
    if not body:
        raise typer.BadParameter("give at least one option to change", param_hint="'OPTIONS'")
    data = st.client().update_maintenance(window, body).get("data") or {}
    done = f"Updated maintenance window {data.get('id')} ({data.get('title')})"
    output.show(st.wants_json(json_), data, window_view, done=done)


@app.command()
def delete(
    ctx: typer.Context,
    window: WindowId,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Delete a window (an open one closes)."""
    st = state(ctx)
    if not yes:
        typer.confirm(f"Delete maintenance window {window}?", abort=True, err=True)
    response = st.client().delete_maintenance(window)
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Deleted maintenance window {window}")


@app.command()
def start(
    ctx: typer.Context,
    window: Annotated[
        int | None,
        typer.Argument(
            help="The window's id; or --tag/--monitor for a new one.", show_default=False
        ),
    ] = None,
    tag: CoverTagOpt = None,
    monitor: MonitorOpt = None,
    for_: Annotated[
        int | None,
        typer.Option(
            "--for",
            parser=parse_duration,
            metavar="DURATION",
            help="Close it after this long, e.g. 30m (default: when ended).",
        ),
    ] = None,
    title: TitleOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Open a window now. Without an id: create one covering --tag/--monitor, then open it."""
    st = state(ctx)
    client = st.client()
    if (window is None) == (not tag and not monitor):
        raise typer.BadParameter(
            "give a window id, or --tag/--monitor, not both", param_hint="'WINDOW'"
        )
    if window is None:
        covers = ", ".join([*(f"tag {t}" for t in tag or []), *(f"#{m}" for m in monitor or [])])
        body = _body(title=title or f"Ad-hoc maintenance: {covers}", monitor=monitor, tag=tag)
        window = (client.create_maintenance(body).get("data") or {})["id"]
    data = client.start_maintenance(window, for_).get("data") or {}
    until = output.when(data.get("active_until")) if data.get("active_until") else "ended"
    done = f"Maintenance window {data.get('id')} ({data.get('title')}) open until {until}"
    output.show(st.wants_json(json_), data, window_view, done=done)


@app.command()
def end(ctx: typer.Context, window: WindowId, json_: JsonFlag = False) -> None:
    """Close a window now (opened by hand or by its schedule); alerts apply again."""
    st = state(ctx)
    data = st.client().end_maintenance(window).get("data") or {}
    done = f"Maintenance window {data.get('id')} ({data.get('title')}) ended"
    output.show(st.wants_json(json_), data, window_view, done=done)
