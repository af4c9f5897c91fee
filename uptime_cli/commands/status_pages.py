"""``uptime status-pages ...``: public status pages (docs/status-pages.md)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from uptime_cli import output
from uptime_cli.commands.options import JsonFlag, with_options
from uptime_cli.context import state

app = typer.Typer(help="Public status pages of your monitors.", no_args_is_help=True)

PageKey = Annotated[str, typer.Argument(help="The page's id or slug.", show_default=False)]
GroupOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--group",
        metavar='"HEADING=ID,ID"',
        help="A section of monitors by id; repeat for more. Replaces all groups.",
    ),
]
GroupsJsonOpt = Annotated[
    str | None,
    typer.Option(
        "--groups-json",
        metavar="JSON",
        help='All groups as JSON: [{"heading", "monitor_ids", "tags", "labels"}].',
    ),
]
DescriptionOpt = Annotated[str | None, typer.Option(help="A line under the title.")]
UrlsOpt = Annotated[
    bool | None, typer.Option("--show-urls/--hide-urls", help="Show monitors' URLs (default hide).")
]
NamesOpt = Annotated[
    bool | None,
    typer.Option(
        "--show-names/--hide-names", help="Show monitors' own names where no label is given."
    ),
]


def _groups(group: list[str] | None, groups_json: str | None) -> list[dict[str, Any]] | None:
    if group and groups_json:
        raise typer.BadParameter("give --group or --groups-json, not both", param_hint="'--group'")
    if groups_json is not None:
        try:
            return json.loads(groups_json)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="'--groups-json'") from None
    if not group:
        return None
    out = []
    for item in group:
        heading, sep, ids = item.rpartition("=")
        try:
            monitor_ids = [int(i) for i in ids.split(",") if i.strip()]
        except ValueError:
            monitor_ids = None
        if not sep or not heading.strip() or monitor_ids is None:
            raise typer.BadParameter(f"{item!r} is not HEADING=ID,ID", param_hint="'--group'")
        out.append({"heading": heading.strip(), "monitor_ids": monitor_ids})
    return out


PAGE_OPTIONS: dict[str, Any] = {
    "description": DescriptionOpt,
    "group": GroupOpt,
    "groups_json": GroupsJsonOpt,
    "show_urls": UrlsOpt,
    "show_names": NamesOpt,
}


def _fields(
    description: str | None,
    group: list[str] | None,
    groups_json: str | None,
    show_urls: bool | None,
    show_names: bool | None,
) -> dict[str, Any]:
    """The page fields of the options given (add and edit take the same ones)."""
    given = {
        "description": description,
        "groups": _groups(group, groups_json),
        "show_urls": show_urls,
        "show_names": show_names,
    }
    return {k: v for k, v in given.items() if v is not None}


with_page_options = with_options(PAGE_OPTIONS, lambda given: _fields(**given), "fields")


@app.command()
@with_page_options
def add(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(help="The address: /status/SLUG.", show_default=False)],
    title: Annotated[str, typer.Argument(help="The page's title.", show_default=False)],
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Create a status page."""
    st = state(ctx)
    body = {"slug": slug, "title": title, **fields}
    data = st.client().create_status_page(body).get("data") or {}
    output.show(
        st.wants_json(json_), data, page_view, done=f"Created status page {data.get('url')}"
    )


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Your status pages."""
    st = state(ctx)
    body = st.client().list_status_pages()
    items = body.get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
        return
    if not items:
        output.info("No status pages.")
        return
    table = Table(box=None, pad_edge=False)
    for name in ("ID", "SLUG", "TITLE", "MONITORS", "URL"):
        table.add_column(name, justify="right" if name in ("ID", "MONITORS") else "left")
    for p in items:
        count = sum(len(g.get("monitor_ids") or []) for g in p.get("groups") or [])
        table.add_row(*(output.cell(v) for v in (p["id"], p["slug"], p["title"], count, p["url"])))
    output.out().print(table)


@app.command()
def show(ctx: typer.Context, page: PageKey, json_: JsonFlag = False) -> None:
    """One status page's configuration."""
    st = state(ctx)
    data = st.client().get_status_page(page).get("data") or {}
    output.show(st.wants_json(json_), data, page_view)


@app.command()
@with_page_options
def edit(
    ctx: typer.Context,
    page: PageKey,
    slug: Annotated[str | None, typer.Option(help="A new address.")] = None,
    title: Annotated[str | None, typer.Option(help="A new title.")] = None,
    json_: JsonFlag = False,
    *,
    fields: dict[str, Any],
) -> None:
    """Change a status page; only the options given are sent."""
    st = state(ctx)
    named = {"slug": slug, "title": title}
    fields = {**{k: v for k, v in named.items() if v is not None}, **fields}
    if not fields:
        raise typer.BadParameter("give at least one option to change", param_hint="'OPTIONS'")
    data = st.client().update_status_page(page, fields).get("data") or {}
    done = f"Updated status page {data.get('slug')}: {', '.join(sorted(fields))}"
    output.show(st.wants_json(json_), data, page_view, done=done)


@app.command()
def delete(
    ctx: typer.Context,
    page: PageKey,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Delete a status page (its monitors stay)."""
    st = state(ctx)
    if not yes:
        typer.confirm(f"Delete status page {page}?", abort=True, err=True)
    response = st.client().delete_status_page(page)
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Deleted status page {page}")


def page_view(p: dict[str, Any]) -> Table:
    rows: list[tuple[str, Any]] = [
        ("id", p.get("id")),
        ("slug", p.get("slug")),
        ("url", p.get("url")),
        ("description", p.get("description") or "-"),
        ("show urls", "yes" if p.get("show_urls") else "no"),
        ("show names", "yes" if p.get("show_names") else "no"),
    ]
    for g in p.get("groups") or []:
        ids = ", ".join(map(str, g.get("monitor_ids") or [])) or "-"
        tags = ", ".join(g.get("tags") or [])
        rows.append((f"group {g.get('heading')}", ids + (f" (tags: {tags})" if tags else "")))
    return output.key_values(p.get("title"), rows)
