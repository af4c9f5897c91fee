"""``uptime apply`` and ``uptime export``: monitors as code (docs/monitors-as-code.md).

apply reads the files (``uptime_cli.monitor_files``), asks the server for the
plan with ``POST /monitors/apply`` and ``dry_run``, which validates every entry
and writes nothing, prints it, and then, unless ``--dry-run``, sends the same
set again to be applied in one transaction. The server knows the fields,
their defaults and how it normalises them; the CLI knows none of them, so
fields added to monitors later flow through unchanged.

Values a file read from the environment (``${UPTIME_VAR_...}``, ``--env``)
are secrets as often as not (a header's token): wherever one occurs in what
is printed, the plan, ``--json`` and the server's messages, it is shown as
``***``.

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
from uptime_cli.monitor_files import Entry, FileProblems, check_allowed, dump, load

_DETAIL = re.compile(r"^monitors\[(\d+)\]\.(.+)$")
SIGNS = {"create": ("+", "green"), "update": ("~", "yellow"), "delete": ("-", "red")}
MASK = "***"


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
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env",
            metavar="NAME",
            help="Let ${NAME} read this environment variable too (UPTIME_VAR_* always can); "
            "repeat for more.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Make your monitors match the files: create, update, and with --prune delete."""
    st = state(ctx)
    named = env or []
    if problems := check_allowed(named):
        raise _invalid(problems)
    try:
        entries = load(files, allowed=frozenset(named))
    except FileProblems as exc:
        raise _invalid(exc.problems) from None
    secrets = frozenset().union(*(entry.from_env for entry in entries))
    client = st.client()
    body = [entry.fields for entry in entries]
    planned = _call(
        lambda: client.apply_monitors(body, prune=prune, dry_run=True), entries, secrets
    )
    shown = masked_plan(planned, secrets)
    as_json = st.wants_json(json_)
    if not as_json:
        output.out().print(plan_view(shown))
    if dry_run or not _has_work(planned):
        if as_json:
            output.print_json(shown)
        if not _has_work(planned):
            output.success("No changes: the server matches the files.")
        else:
            output.info("Dry run: nothing was changed.")
        return
    done = _call(lambda: client.apply_monitors(body, prune=prune, dry_run=False), entries, secrets)
    if as_json:
        output.print_json(masked_plan(done, secrets))
        return
    if done.get("plan") != planned.get("plan"):
        # Someone changed the monitors in between: what was applied is this.
        output.warn("The monitors changed since the plan; this is what was applied:")
        output.out().print(plan_view(masked_plan(done, secrets)))
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


def _call(send: Any, entries: list[Entry], secrets: frozenset[str]) -> dict[str, Any]:
    """The data of an apply call; a refusal of the files exits 2, other failures 1.

    The server's words may quote a value the files read from the environment: masked.
    """
    try:
        return send().get("data") or {}
    except ApiRefused as exc:
        if exc.code == "VALIDATION_ERROR" and _about_entries(exc.details):
            problems = server_problems(exc.details, entries)
            raise _invalid([mask(p, secrets) for p in problems]) from None
        message = mask(f"{exc.code}: {exc.message}", secrets)
        raise CliError(f"{message}; nothing was applied", ERROR) from None
    except ServerError as exc:
        message = mask(f"(HTTP {exc.status} {exc.code}): {exc.message}", secrets)
        raise CliError(f"server error {message}; nothing was applied", ERROR) from None
    except ApiClientError as exc:
        raise CliError(f"{mask(str(exc), secrets)}; nothing was applied", ERROR) from None


def mask(value: Any, secrets: frozenset[str]) -> Any:
    """*value* with every occurrence of a secret shown as ``***`` (in strings, lists and
    mappings; a number or boolean that is one, whole)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):  # the longest first
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, list):
        return [mask(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: mask(v, secrets) for k, v in value.items()}
    if value is not None and (str(value) in secrets or json.dumps(value) in secrets):
        return MASK
    return value


def masked_plan(result: dict[str, Any], secrets: frozenset[str]) -> dict[str, Any]:
    """The server's apply result with the secrets masked in names, keys and changed values."""
    if not secrets:
        return result
    plan = [
        {
            **step,
            "name": mask(step.get("name"), secrets),
            "key": mask(step.get("key"), secrets),
            "changes": [
                {
                    **change,
                    "old": _mask_old(change.get("old"), change.get("new"), secrets),
                    "new": mask(change.get("new"), secrets),
                }
                for change in step.get("changes") or []
            ],
        }
        for step in result.get("plan") or []
    ]
    return {**result, "plan": plan}


def _mask_old(old: Any, new: Any, secrets: frozenset[str]) -> Any:
    """An old value, masked where the new one at the same place came from the environment.

    The old value was most likely read from the environment the last time (a
    token since rotated): not a secret of this run, but one all the same.
    """
    if _has_secret(new, secrets):
        if isinstance(old, dict) and isinstance(new, dict):
            return {k: _mask_old(v, new.get(k), secrets) for k, v in old.items()}
        if isinstance(old, list) and isinstance(new, list):
            return [v if v in new and not _has_secret(v, secrets) else MASK for v in old]
        if isinstance(old, str) and isinstance(new, str):
            return _mask_as(old, new, secrets)
        return mask(old, secrets) if old is None or old == "" else MASK
    return mask(old, secrets)


def _mask_as(old: str, new: str, secrets: frozenset[str]) -> str:
    """*old* masked where *new* has a secret: ``Bearer ***`` when both are ``Bearer ...``,
    else all of it."""
    order = sorted(secrets, key=len, reverse=True)
    parts = re.split("(" + "|".join(map(re.escape, order)) + ")", new)
    # parts: text, secret, text, secret, ... text
    pattern = "".join(".*?" if i % 2 else re.escape(p) for i, p in enumerate(parts))
    shape = "".join(MASK if i % 2 else p for i, p in enumerate(parts))
    return shape if re.fullmatch(pattern, old, re.DOTALL) else MASK


def _has_secret(value: Any, secrets: frozenset[str]) -> bool:
    return mask(value, secrets) != value


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
