"""``uptime ping`` and ``uptime exec``: report to a heartbeat monitor (docs/heartbeats.md).

MONITOR is the monitor's id or name (looked up through the API, so the
session is needed), or its ping URL itself; left out, ``UPTIME_PING_URL``
names the ping URL, and no sign-in is needed: a crontab line carries all.

``ping`` is for scripts and fails like any command (3 unreachable, 4
refused, 5 server error). ``exec`` never lets monitoring change the job: a
ping that fails, or a monitor that cannot be looked up, is a warning on
stderr, and ``exec`` exits with the command's own exit code.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from typer.core import TyperCommand

from uptime_cli import child, output
from uptime_cli.client import ApiClient, ApiClientError, ApiRefused
from uptime_cli.commands.monitors import all_pages
from uptime_cli.commands.options import JsonFlag
from uptime_cli.context import (
    ERROR,
    REFUSED,
    SERVER_ERROR,
    UNREACHABLE,
    CliError,
    CliState,
    state,
)
from uptime_cli.pings import (
    DEFAULT_DEADLINE,
    DEFAULT_RETRIES,
    MAX_BODY,
    MIN_DEADLINE,
    Pinger,
    PingResult,
    label,
)

PING_URL_ENV = "UPTIME_PING_URL"

MonitorArg = Annotated[
    str | None,
    typer.Argument(
        help=f"The monitor's id, name or ping URL (default: ${PING_URL_ENV}).",
        metavar="MONITOR",
        show_default=False,
    ),
]
DeadlineOpt = Annotated[
    float,
    typer.Option(
        "--ping-deadline",
        envvar="UPTIME_PING_DEADLINE",
        metavar="SECONDS",
        min=MIN_DEADLINE,
        help="Most time one ping may take, retries included.",
    ),
]
RetriesOpt = Annotated[
    int,
    typer.Option(
        "--ping-retries",
        envvar="UPTIME_PING_RETRIES",
        min=0,
        max=20,
        help="Retries of a ping that got no answer, a 5xx or a 429 (within the deadline).",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("ping")(ping)
    app.command("exec", cls=ExecCommand)(exec_)


# -- uptime ping ---------------------------------------------------------------


def ping(
    ctx: typer.Context,
    monitor: MonitorArg = None,
    start: Annotated[bool, typer.Option("--start", help="A run started.")] = False,
    fail: Annotated[bool, typer.Option("--fail", help="A run failed.")] = False,
    exit_code: Annotated[
        int | None,
        typer.Option(
            "--exit-code", metavar="N", min=0, max=255, help="A run ended with exit code N."
        ),
    ] = None,
    log: Annotated[bool, typer.Option("--log", help="Only a message; no change of state.")] = False,
    message: Annotated[
        str | None,
        typer.Option(
            "--message",
            "-m",
            metavar="TEXT",
            help="The run's message (last 10 KB kept); - reads it from stdin.",
        ),
    ] = None,
    deadline: DeadlineOpt = DEFAULT_DEADLINE,
    retries: RetriesOpt = DEFAULT_RETRIES,
    json_: JsonFlag = False,
) -> None:
    """Send one ping to a heartbeat monitor: success unless told otherwise."""
    kinds = [k for k, given in (("start", start), ("fail", fail), ("log", log)) if given]
    if exit_code is not None:
        kinds.append(str(exit_code))
    if len(kinds) > 1:
        raise typer.BadParameter(
            "give at most one of --start, --fail, --exit-code, --log", param_hint="'--start'"
        )
    kind = kinds[0] if kinds else "success"
    body = sys.stdin.buffer.read() if message == "-" else (message or "").encode()
    st = state(ctx)
    pinger = Pinger(ping_url(st, monitor), deadline=deadline, retries=retries)
    result = pinger.send(kind, body)
    if st.wants_json(json_):
        output.print_json(result.as_json())
    if not result.ok:
        raise CliError(describe_failure(result, pinger.url), _exit_code(result))
    if not st.wants_json(json_):
        output.success(f"Sent the {label(kind)} ping")


def _exit_code(result: PingResult) -> int:
    if result.status is None:
        return UNREACHABLE
    if result.status >= 500:
        return SERVER_ERROR
    return REFUSED if result.status >= 400 else ERROR


# -- uptime exec ---------------------------------------------------------------


class ExecCommand(TyperCommand):
    """Takes everything after ``--`` as the command, before click parses the rest.

    click drops the ``--`` and keeps no record of where it was, and without it
    ``exec -- job`` and ``exec job`` (MONITOR "job", no command) would look
    alike.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["uptime.exec.command"] = args[:at], args[at + 1 :]
        return super().parse_args(ctx, args)


def exec_(
    ctx: typer.Context,
    monitor: MonitorArg = None,
    deadline: DeadlineOpt = DEFAULT_DEADLINE,
    retries: RetriesOpt = DEFAULT_RETRIES,
) -> None:
    """Run a command and report it: `uptime exec [MONITOR] -- COMMAND [ARGS]...`

    Sends a start ping, runs the command with its input and output passed
    through, then pings its exit code with the last 10 KB of its output.
    Exits with the command's exit code, whatever happened to the pings.
    """
    command = ctx.meta.get("uptime.exec.command") or []
    if not command:
        raise typer.BadParameter(
            "give the command to run after --, e.g. uptime exec backups -- backup.sh",
            param_hint="'COMMAND'",
        )
    pinger = _exec_pinger(state(ctx), monitor, deadline, retries)
    raise typer.Exit(_run(command).exit_code if pinger is None else _run_reported(command, pinger))


def _run(command: list[str]) -> child.Finished:
    sys.stdout.flush()
    sys.stderr.flush()
    finished = child.run(command, sys.stdout.buffer, sys.stderr.buffer, MAX_BODY)
    if finished.error:
        warn(finished.error)
    return finished


def _run_reported(command: list[str], pinger: Pinger) -> int:
    """Ping start, run *command*, ping its exit code and output; return the exit code."""
    ended = threading.Event()  # the start ping stops retrying once the command has ended
    started: list[PingResult] = []
    # The start ping goes out beside the command, so a server that is down
    # does not hold the job back. It is over before the exit-code ping is sent:
    # a start arriving after the finish would read as a run that hangs.
    start = threading.Thread(
        target=lambda: started.append(pinger.send("start", cancelled=ended)), daemon=True
    )
    start.start()
    finished = _run(command)
    ended.set()
    waited = time.monotonic()
    start.join()
    # Time spent waiting for the start comes off the exit-code ping's deadline
    # (down to half of it), so a dead server holds the exit back about one deadline.
    left = max(pinger.deadline / 2, pinger.deadline - (time.monotonic() - waited))
    body = finished.output or (finished.error or "").encode()
    for result in (*started, pinger.send(str(finished.exit_code), body, deadline=left)):
        if not result.ok:
            warn(describe_failure(result, pinger.url))
    return finished.exit_code


def _exec_pinger(st: CliState, monitor: str | None, deadline: float, retries: int) -> Pinger | None:
    """The pinger of MONITOR; None, with a warning, when the API could not tell its URL."""
    try:
        url = ping_url(st, monitor)
    except (ApiClientError, CliError) as exc:
        warn(f"{_message(exc)}; running the command without pings")
        return None
    return Pinger(url, deadline=deadline, retries=retries)


# -- shared ----------------------------------------------------------------------


def ping_url(st: CliState, monitor: str | None) -> str:
    """The ping URL named by MONITOR, or by $UPTIME_PING_URL when MONITOR is left out."""
    if monitor is None:
        from_env = os.environ.get(PING_URL_ENV, "").strip()
        if not from_env:
            raise typer.BadParameter(
                f"name a monitor (id, name or ping URL), or set {PING_URL_ENV}",
                param_hint="'MONITOR'",
            )
        return _checked_url(from_env, PING_URL_ENV)
    if "://" in monitor:
        return _checked_url(monitor, "MONITOR")
    client = st.client()
    found = client.get_monitor(int(monitor)) if monitor.isdigit() else _named(client, monitor)
    data = found.get("data") or {}
    url = data.get("ping_url")
    if not isinstance(url, str) or not url:
        raise CliError(
            f"monitor {data.get('id')} ({data.get('name')}) has no ping URL: "
            "only heartbeat monitors take pings",
            REFUSED,
        )
    return url


def _named(client: ApiClient, name: str) -> dict[str, Any]:
    listed = all_pages(client, 100, {"search": name})["data"]
    ids = [m["id"] for m in listed if m.get("name") == name]
    if not ids:
        raise CliError(f"you have no monitor named {name!r}", REFUSED)
    if len(ids) > 1:
        raise CliError(f"several monitors are named {name!r} (ids {ids}); give the id", REFUSED)
    return client.get_monitor(ids[0])


def _checked_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "/ping/" not in parts.path:
        raise typer.BadParameter(
            f"expected a ping URL like https://uptime.example.com/ping/TOKEN, got {url!r}",
            param_hint=f"'{where}'",
        )
    return url


def describe_failure(result: PingResult, url: str) -> str:
    """One line on a failed ping; it names the server, never the token."""
    parts = urlsplit(url)
    attempts = "1 attempt" if result.attempts == 1 else f"{result.attempts} attempts"
    kind = f"exit code {result.kind}" if result.kind.isdigit() else result.kind
    return f"the {kind} ping to {parts.scheme}://{parts.netloc} failed: {result.error} ({attempts})"


def warn(message: str) -> None:
    # Plain text, one line, whatever the terminal: this often ends up in a cron mail.
    sys.stderr.write(f"uptime: warning: {output.printable(message)}\n")
    sys.stderr.flush()


def _message(exc: Exception) -> str:
    if isinstance(exc, ApiRefused):
        return f"{exc.code}: {exc.message}"
    return exc.message if isinstance(exc, CliError) else str(exc)
