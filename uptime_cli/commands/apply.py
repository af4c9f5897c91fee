"""``uptime apply`` and ``uptime export``: monitors as code (docs/monitors-as-code.md).

apply reads the files (``uptime_cli.monitor_files``), asks the server for the
plan with ``POST /monitors/apply`` and ``dry_run``, which validates every entry
and writes nothing, prints it, and then, unless ``--dry-run``, sends the same
set again to be applied in one transaction. The server knows the fields,
their defaults and how it normalises them; the CLI knows none of them, so
fields added to monitors later flow through unchanged.

Exit codes: 0 when the server matches the files; 2 when a file is invalid
(each problem with file, line and field, nothing applied); 1 on any other
failure (the server applies all or nothing, so nothing was applied then).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from uptime_cli import output
from uptime_cli.client import ApiClientError, ApiRefused, ServerError
from uptime_cli.commands.options import TagFilterOpt
from uptime_cli.context import ERROR, USAGE, CliError, state
from uptime_cli.monitor_files import Entry, FileProblems, dump, load

_DETAIL = re.compile(r"^monitors\[(\d+)\]\.(.+)$")
SIGNS = {"create": ("+", "green"), "update": ("~", "yellow"), "delete": ("-", "red")}


def register(app: typer.Typer) -> None:
    app.command()(apply)
    app.command()(export)


def apply(
    ctx: typer.Context,
    files: Annotated[
        list[Path],
        typer.Option(
            "--file",
            "-f",
            metavar="PATH",
            help="A monitors file (YAML or JSON) or a directory of them; repeat for more.",
            show_default=False,
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; change nothing.")
    ] = False,
    prune: Annotated[
        bool, typer.Option("--prune", help="Delete your monitors that the files do not list.")
    ] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print the server's plan as JSON.")] = False,
) -> None:
    """Make your monitors match the files: create, update, and with --prune delete."""
    st = state(ctx)
    try:
        entries = load(files)
    except FileProblems as exc:
        raise _invalid(exc.problems) from None
    client = st.client()
    body = [entry.fields for entry in entries]
    planned = _call(lambda: client.apply_monitors(body, prune=prune, dry_run=True), entries)
    as_json = st.wants_json(json_)
    if not as_json:
        output.out().print(plan_view(planned))
    if dry_run or not _has_work(planned):
        if as_json:
            output.print_json(planned)
        if not _has_work(planned):
            output.success("No changes: the server matches the files.")
        else:
            output.info("Dry run: nothing was changed.")
        return
    done = _call(lambda: client.apply_monitors(body, prune=prune, dry_run=False), entries)
    if as_json:
        output.print_json(done)
        return
    if done.get("plan") != planned.get("plan"):
        # Someone changed the monitors in between: what was applied is this.
        output.warn("The monitors changed since the plan; this is what was applied:")
        output.out().print(plan_view(done))
    summary = done.get("summary") or {}
    output.success(
        f"Applied: {summary.get('create', 0)} created, {summary.get('update', 0)} updated, "
        f"{summary.get('delete', 0)} deleted."
    )


def export(
    ctx: typer.Context,
    tag: TagFilterOpt = None,
    json_: Annotated[bool, typer.Option("--json", help="Write JSON instead of YAML.")] = False,
) -> None:
    """Write your monitors as a monitors file (only what differs from the defaults)."""
    st = state(ctx)
    data = st.client().export_monitors(tag=tag).get("data") or {}
    entries = data.get("monitors") or []
    typer.echo(dump(entries, as_json=st.wants_json(json_)), nl=False)
    output.info(f"Exported {len(entries)} monitor(s).")


def _call(send: Any, entries: list[Entry]) -> dict[str, Any]:
    """The data of an apply call; a refusal of the files exits 2, other failures 1."""
    try:
        return send().get("data") or {}
    except ApiRefused as exc:
        if exc.code == "VALIDATION_ERROR" and _about_entries(exc.details):
            raise _invalid(server_problems(exc.details, entries)) from None
        raise CliError(f"{exc.code}: {exc.message}; nothing was applied", ERROR) from None
    except ServerError as exc:
        raise CliError(
            f"server error (HTTP {exc.status} {exc.code}): {exc.message}; nothing was applied",
            ERROR,
        ) from None
    except ApiClientError as exc:
        raise CliError(f"{exc}; nothing was applied", ERROR) from None


def _about_entries(details: dict[str, Any]) -> bool:
    return any(_DETAIL.match(name) for name in details)


def server_problems(details: dict[str, Any], entries: list[Entry]) -> list[str]:
    """The server's VALIDATION_ERROR details, each at the file and line of its field."""
    problems = []
    for name, messages in details.items():
        text = "; ".join(messages) if isinstance(messages, list) else str(messages)
        match = _DETAIL.match(name)
        index = int(match.group(1)) if match else -1
        if not 0 <= index < len(entries):
            problems.append(f"{name}: {text}")
            continue
        entry, field = entries[index], match.group(2)
        problems.append(f"{entry.place_of(field)}: {entry.label}: {field}: {text}")
    return problems


def _invalid(problems: list[str]) -> CliError:
    for problem in problems:
        output.failure(problem)
    return CliError(f"{len(problems)} problem(s) in the files; nothing was applied", USAGE)


def _has_work(result: dict[str, Any]) -> bool:
    return any(step.get("action") in SIGNS for step in result.get("plan") or [])


def _counts(summary: dict[str, Any]) -> str:
    return (
        f"{summary.get('create', 0)} to create, {summary.get('update', 0)} to update, "
        f"{summary.get('delete', 0)} to delete, {summary.get('unchanged', 0)} unchanged"
    )


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def plan_view(result: dict[str, Any]) -> Text:
    """The plan, terraform-style: + create, ~ update with field: old → new, - delete."""
    text = Text()
    for step in result.get("plan") or []:
        action = step.get("action")
        label = output.printable(str(step.get("name")))
        if step.get("key"):
            label += f" (key {output.printable(str(step['key']))})"
        if step.get("id") is not None:
            label += f" [id {step['id']}]"
        if action in SIGNS:
            sign, style = SIGNS[action]
            text.append(f"{sign} {action} ", style=style).append(f"{label}\n")
            for change in step.get("changes") or []:
                field = output.printable(str(change.get("field")))
                new = output.printable(_value(change.get("new")))
                line = (
                    f"    {field}: {new}\n"
                    if action == "create"
                    else f"    {field}: {output.printable(_value(change.get('old')))} → {new}\n"
                )
                text.append(line)
        elif action == "extra":
            text.append("! not in the files ", style="yellow").append(
                f"{label}: kept (--prune deletes it)\n"
            )
    summary = result.get("summary") or {}
    line = f"Plan: {_counts(summary)}"
    if summary.get("extra"):
        line += f", {summary['extra']} not in the files"
    return text.append(line + ".")
