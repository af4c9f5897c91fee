"""Options shared by several commands, and the parsers behind them.

The monitor configuration options are declared once here and given to both
``monitors add`` and ``monitors edit`` by ``with_monitor_options``;
``monitor_fields`` turns the given ones (and only those) into API fields.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the API's data as JSON (for scripts).")
]
MonitorId = Annotated[int, typer.Argument(help="The monitor's id.", min=1, show_default=False)]
PageOpt = Annotated[int | None, typer.Option(help="Page number (from 1).", min=1)]

# -- monitor configuration (add / edit) --------------------------------------

TypeOpt = Annotated[
    str | None,
    typer.Option(
        "--type",
        help="http, https, tcp, udp, ping, dns or heartbeat (default: from the URL scheme).",
    ),
]
MethodOpt = Annotated[str | None, typer.Option(help="HTTP method (default GET).")]
ExpectStatusOpt = Annotated[
    list[int] | None,
    typer.Option(
        "--expect-status", metavar="CODE", help="Status code counted as up; repeat for more."
    ),
]
TimeoutOpt = Annotated[int | None, typer.Option(help="Seconds before a check fails (5-300).")]
IntervalOpt = Annotated[int | None, typer.Option(help="Seconds between checks (default 60).")]
RetriesOpt = Annotated[int | None, typer.Option(help="Retries of a failed check (0-10).")]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar='"K: V"',
        help='Request header; repeat for more. Replaces all headers; --header "" clears them.',
    ),
]
BodyOpt = Annotated[str | None, typer.Option(help="Request body sent by the check.")]
ExpectContentOpt = Annotated[
    str | None, typer.Option("--expect-content", help="Text that must appear in the response.")
]
ExcludeContentOpt = Annotated[
    str | None,
    typer.Option("--exclude-content", help="Text that must not appear in the response."),
]
JsonPathOpt = Annotated[
    str | None, typer.Option("--json-path", help="JSONPath that must match in a JSON response.")
]
JsonValueOpt = Annotated[
    str | None, typer.Option("--json-value", help="Value expected at --json-path.")
]
FollowOpt = Annotated[
    bool | None,
    typer.Option("--follow-redirects/--no-follow-redirects", help="Follow redirects (default on)."),
]
VerifyOpt = Annotated[
    bool | None,
    typer.Option("--verify-ssl/--no-verify-ssl", help="Verify TLS certificates (default on)."),
]
LocationOpt = Annotated[
    list[str] | None,
    typer.Option("--location", metavar="L", help="Location to check from; repeat for more."),
]
DegradedOpt = Annotated[
    int | None,
    typer.Option("--degraded-ms", help="A passing check slower than this (ms) counts as warning."),
]

TlsOpt = Annotated[
    bool | None,
    typer.Option("--tls/--no-tls", help="tcp: TLS handshake after connecting (default off)."),
]
SendOpt = Annotated[
    str | None,
    typer.Option(
        help="tcp: text sent after connecting; udp: the datagram sent. "
        "Escapes \\r \\n \\t \\0 \\xHH."
    ),
]
ExpectOpt = Annotated[
    str | None,
    typer.Option(help="tcp, udp: text the reply must contain (within the timeout)."),
]
RecordTypeOpt = Annotated[
    str | None,
    typer.Option("--record-type", metavar="TYPE", help="dns: record type queried (default A)."),
]
ResolverOpt = Annotated[
    str | None,
    typer.Option(help="dns: host[:port] of the resolver asked (default: the system's)."),
]
ExpectedRcodeOpt = Annotated[
    str | None,
    typer.Option("--expected-rcode", metavar="RCODE", help="dns: e.g. NXDOMAIN (default NOERROR)."),
]
ExpectedValueOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--expected-value", metavar="V", help="dns: a value the answer must hold; repeat for more."
    ),
]
CountOpt = Annotated[
    int | None, typer.Option("--count", help="ping: echo requests per check (default 3).")
]
MaxLossOpt = Annotated[
    float | None,
    typer.Option("--max-packet-loss", metavar="PCT", help="ping: lost echoes allowed (default 0)."),
]


def tag_option(help: str) -> Any:
    """A repeatable ``--tag TAG`` option with *help*."""
    return Annotated[list[str] | None, typer.Option("--tag", metavar="TAG", help=help)]


TagOpt = tag_option(
    'A label (lowercase); repeat for more. Replaces all tags; --tag "" clears them.'
)
TagFilterOpt = tag_option("Only monitors with this tag; repeat: all of them.")
DependsOnOpt = Annotated[
    list[int] | None,
    typer.Option(
        "--depends-on",
        metavar="ID",
        help="A monitor of the team this one depends on; repeat for more. Replaces the list.",
    ),
]


def parse_duration(raw: str | int) -> int:
    """``90s``, ``10m``, ``1h``, ``2d``, ``1w`` or plain seconds → seconds (a typer parser)."""
    if isinstance(raw, int):
        return raw
    seconds = parse_span(raw, None)
    assert seconds is not None
    return seconds


PeriodOpt = Annotated[
    int | None,
    typer.Option(
        parser=parse_duration,
        metavar="DURATION",
        help="heartbeat: how often the job pings, e.g. 1h, 15m, 1d (or --cron).",
    ),
]
GraceOpt = Annotated[
    int | None,
    typer.Option(
        parser=parse_duration,
        metavar="DURATION",
        help="heartbeat: how late a ping may be, e.g. 10m (default 5m).",
    ),
]
CronOpt = Annotated[
    str | None,
    typer.Option(metavar="EXPR", help="heartbeat: when the job runs, e.g. '0 3 * * *'."),
]
TimezoneOpt = Annotated[
    str | None,
    typer.Option(metavar="TZ", help="heartbeat: time zone of --cron, e.g. Europe/Berlin (UTC)."),
]

# parameter of add/edit → (its option, the API field it sets)
MONITOR_OPTIONS: dict[str, tuple[Any, str]] = {
    "type_": (TypeOpt, "type"),
    "method": (MethodOpt, "method"),
    "expect_status": (ExpectStatusOpt, "expected_status"),
    "timeout": (TimeoutOpt, "timeout"),
    "interval": (IntervalOpt, "check_interval"),
    "retries": (RetriesOpt, "retry_count"),
    "header": (HeaderOpt, "headers"),
    "body": (BodyOpt, "body"),
    "expect_content": (ExpectContentOpt, "expected_content"),
    "exclude_content": (ExcludeContentOpt, "excluded_content"),
    "json_path": (JsonPathOpt, "json_path"),
    "json_value": (JsonValueOpt, "expected_json_value"),
    "follow_redirects": (FollowOpt, "follow_redirects"),
    "verify_ssl": (VerifyOpt, "verify_ssl"),
    "location": (LocationOpt, "locations"),
    "degraded_ms": (DegradedOpt, "degraded_response_time"),
    "tls": (TlsOpt, "tls"),
    "send": (SendOpt, "send"),
    "expect": (ExpectOpt, "expect"),
    "record_type": (RecordTypeOpt, "record_type"),
    "resolver": (ResolverOpt, "resolver"),
    "expected_rcode": (ExpectedRcodeOpt, "expected_rcode"),
    "expected_value": (ExpectedValueOpt, "expected_values"),
    "count": (CountOpt, "count"),
    "max_packet_loss": (MaxLossOpt, "max_packet_loss"),
    "tag": (TagOpt, "tags"),
    "depends_on": (DependsOnOpt, "depends_on"),
    "period": (PeriodOpt, "period"),
    "grace": (GraceOpt, "grace"),
    "cron": (CronOpt, "cron"),
    "timezone": (TimezoneOpt, "timezone"),
}


def with_options(
    options: Mapping[str, Any], convert: Callable[[dict[str, Any]], Any], into: str
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the Typer *options* (parameter → annotation), just before its ``--json``.

    The command declares a keyword-only parameter *into* instead and receives
    there ``convert`` of the options' values (None when not given). Typer
    reads a command's parameters from its signature, so the wrapper shows
    Typer the command's own parameters with the options spliced in.
    """

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        spliced = [
            inspect.Parameter(
                name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=opt
            )
            for name, opt in options.items()
        ]
        at = next((i for i, p in enumerate(own) if p.name == "json_"), len(own))
        params = [*own[:at], *spliced, *(p for p in own[at:] if p.name != into)]

        @functools.wraps(command)
        def run(**kwargs: Any) -> None:
            given = {name: kwargs.pop(name) for name in options}
            command(**kwargs, **{into: convert(given)})

        run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def with_monitor_options(command: Callable[..., None]) -> Callable[..., None]:
    """Every monitor configuration option; the command gets their API ``fields``."""
    options = {name: opt for name, (opt, _) in MONITOR_OPTIONS.items()}
    return with_options(options, monitor_fields, "fields")(command)


def monitor_fields(params: Mapping[str, Any]) -> dict[str, Any]:
    """The API fields of the monitor options that were given (None/empty = not given)."""
    fields: dict[str, Any] = {}
    for param, (_, field) in MONITOR_OPTIONS.items():
        value = params.get(param)
        if value is None or (isinstance(value, list | tuple) and not value):
            continue
        if field == "headers":
            value = parse_headers(value)
        elif field == "tags":
            value = [tag for tag in value if tag.strip()]
        elif isinstance(value, tuple):
            value = list(value)
        fields[field] = value
    return fields


def parse_headers(values: list[str] | tuple[str, ...]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw in values:
        if not raw.strip():
            continue
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise typer.BadParameter(
                f'expected "Name: value", got {raw!r}', param_hint="'--header'"
            )
        headers[name.strip()] = value.strip()
    return headers


def parse_assignment(raw: str) -> tuple[str, Any]:
    """``field=value`` → (field, value parsed as JSON when it parses, else the string)."""
    field, sep, text = raw.partition("=")
    if not sep or not field.strip():
        raise typer.BadParameter(f"expected field=value, got {raw!r}", param_hint="'--set'")
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return field.strip(), value


_RELATIVE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def span_seconds(raw: str) -> int | None:
    """``30m``, ``2h``, ``90d``, ``1w`` as seconds; None if *raw* is not such a span."""
    match = _RELATIVE.match(raw.strip().lower())
    return int(match.group(1)) * _UNITS[match.group(2)] if match else None


def expires_in(raw: str | None) -> int | None:
    """``--expires`` of a token (``30m``, ``12h``, ``90d``, ``52w``) in seconds; None: never."""
    if raw is None:
        return None
    seconds = span_seconds(raw)
    if seconds is None:
        raise typer.BadParameter(
            f"expected a span like 30m, 12h, 90d or 52w; got {raw!r}", param_hint="'--expires'"
        )
    return seconds


ExpiresOpt = Annotated[
    str | None,
    typer.Option(help="Lifetime: a span like 30m, 12h, 90d, 52w (default: never expires)."),
]


def parse_span(raw: str | None, option: str | None) -> int | None:
    """A length of time, ``90s``, ``30m``, ``1h``, ``1d``, ``1w`` or bare seconds, in seconds."""
    if raw is None:
        return None
    text = raw.strip().lower()
    if text.isdigit():
        return int(text)
    seconds = span_seconds(text)
    if seconds is None:
        raise typer.BadParameter(
            f"expected seconds or a span like 90s, 30m, 1h, 1d; got {raw!r}",
            param_hint=f"'{option}'" if option else None,
        )
    return seconds


def parse_when(raw: str | None, option: str, *, now: datetime | None = None) -> str | None:
    """ISO 8601 (passed on as given) or a span back from now like ``30m``, ``2h``, ``7d``."""
    if raw is None:
        return None
    text = raw.strip()
    seconds = span_seconds(text)
    if seconds is not None:
        moment = (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(
            f"expected an ISO 8601 time or a span like 30m, 2h, 7d; got {raw!r}",
            param_hint=f"'{option}'",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # the API speaks UTC; so do naive times here
    return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")
