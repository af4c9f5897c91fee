"""Rendering: JSON for scripts, rich tables and panels for people.

Data goes to stdout, messages to stderr. Consoles are made per call so they
write to whatever ``sys.stdout``/``sys.stderr`` are at that moment (tests
swap them).

Everything shown that came from a server (names, URLs, errors, messages)
goes through ``printable`` and into a ``Text``: no control character reaches
the terminal (an ESC would let a monitored service or another user drive it),
and no rich markup in a name (``[link=...]``) is interpreted. JSON output
stays exact JSON, with DEL and C1 characters escaped too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

STATUS_STYLES = {
    "online": "green",
    "warning": "yellow",
    "offline": "bold red",
    "pending": "cyan",
    "maintenance": "blue",
    "active": "bold red",
    "resolved": "green",
}
DASH = "—"
_HTTP = ("http", "https")


def out() -> Console:
    return Console(highlight=False, soft_wrap=False)


def err() -> Console:
    return Console(stderr=True, highlight=False)


# C0, DEL and C1: whitespace controls become a space, the others are dropped.
_CONTROLS = {
    code: " " if chr(code) in "\t\n\v\f\r" else None for code in (*range(0x20), *range(0x7F, 0xA0))
}
# json.dumps escapes C0 itself; with ensure_ascii=False it writes DEL and C1 raw.
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def printable(text: str) -> str:
    """*text* without control characters, for a terminal."""
    return text.translate(_CONTROLS)


def cell(value: Any) -> Text:
    """A value from the server as table text: printable, never read as markup."""
    return value if isinstance(value, Text) else Text(printable(plain(value)))


def print_json(value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False).translate(_JSON_ESCAPES)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def show(
    as_json: bool,
    data: Any,
    view: Callable[[Any], RenderableType] | None = None,
    *,
    done: str | None = None,
) -> None:
    """A command's result: *data* as JSON for scripts, else its *view* and the *done* line."""
    if as_json:
        print_json(data)
        return
    if view is not None:
        out().print(view(data))
    if done is not None:
        success(done)


def success(message: str) -> None:
    err().print(Text("✓ ", style="green") + Text(printable(message)))


def info(message: str) -> None:
    err().print(Text(printable(message)))


def warn(message: str) -> None:
    err().print(Text("! ", style="yellow") + Text(printable(message)))


def failure(message: str) -> None:
    err().print(Text("uptime: ", style="bold red") + Text(printable(message)))


# -- value formatting ---------------------------------------------------------


def status_text(status: str | None, paused: bool = False, blocked: bool = False) -> Text:
    label = Text(printable(status or DASH), style=STATUS_STYLES.get(status or "", ""))
    if paused:
        label.append(" (paused)", style="dim")
    if blocked:
        # docs/monitors.md#dependencies: a monitor it depends on is down.
        label.append(" (blocked)", style="magenta")
    return label


def pct(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value:.2f}%" if value < 100 else "100%"


def ms(value: int | float | None) -> str:
    return DASH if value is None else f"{round(value)} ms"


def when(value: str | None) -> str:
    """ISO 8601 UTC → ``2026-11-22 12:00:05Z`` (still UTC, easier to read)."""
    return DASH if not value else value.replace("T", " ")


def short_when(value: str | None) -> str:
    """ISO 8601 UTC → ``11-22 12:00`` for dense tables (the year and seconds dropped)."""
    return DASH if not value else value[5:16].replace("T", " ")


def duration(seconds: int | float | None) -> str:
    if seconds is None:
        return DASH
    seconds = int(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    if seconds or not parts:
        parts.append(f"{seconds}s")
    return " ".join(parts)


def plain(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else DASH
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) if value else DASH
    return str(value)


# -- generic views --------------------------------------------------------------


def key_values(title: str | None, rows: Iterable[tuple[str, Any]]) -> Table:
    table = Table(
        title=None if title is None else cell(title),
        show_header=False,
        box=None,
        title_justify="left",
        pad_edge=False,
    )
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, cell(value))
    return table


def page_footer(pagination: dict[str, Any] | None, shown: int) -> str | None:
    if not pagination:
        return None
    total = pagination.get("total", shown)
    page = pagination.get("page", 1)
    pages = pagination.get("pages")
    where = f"page {page} of {pages}" if pages is not None else f"page {page}"
    return f"{shown} shown of {total} ({where})"


# -- monitors -------------------------------------------------------------------


def monitors_table(items: list[dict[str, Any]]) -> Table:
    # The CODE column appears only when some http(s) row has a status code,
    # and then only those rows fill it.
    codes = any(m.get("type") in _HTTP and m.get("status_code") is not None for m in items)
    columns = [
        ("ID", "right"),
        ("NAME", "left"),
        ("STATUS", "left"),
        ("UPTIME 24H", "right"),
        ("RESPONSE", "right"),
        *([("CODE", "right")] if codes else []),
        ("LAST CHECK", "left"),
        ("TYPE", "left"),
        ("TARGET", "left"),
    ]
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=name != "TARGET", overflow="fold")
    for m in items:
        code = [cell(http_status(m.get("type"), m.get("status_code")))] if codes else []
        table.add_row(
            cell(m["id"]),
            cell(m.get("name") or ""),
            status_text(m.get("status"), bool(m.get("paused")), bool(m.get("blocked"))),
            cell(pct(m.get("uptime_24h"))),
            cell(ms(m.get("response_time"))),
            *code,
            cell(when(m.get("last_check"))),
            cell(m.get("type") or DASH),
            cell(target(m)),
        )
    return table


def http_status(kind: str | None, code: int | None) -> str:
    """An HTTP status for an http(s) monitor; a dash for types that have none."""
    return DASH if kind not in _HTTP or code is None else str(code)


def target(m: dict[str, Any]) -> str:
    """What a monitor checks, as its type names it: the URL for http(s), tcp and
    udp, the name and record type for dns, the host for ping."""
    url = m.get("url") or ""
    kind = m.get("type")
    if kind == "dns":
        # A summary from an older server has no record_type: better none than a guessed A.
        return f"{query_name(m)} {record_type(m)}" if "record_type" in m else query_name(m)
    if kind == "ping" and "://" in url:
        return url.partition("://")[2]
    if kind == "heartbeat":
        return schedule(m)
    return url or DASH


def schedule(m: dict[str, Any]) -> str:
    """A heartbeat's schedule: "every 1h, grace 10m" or "cron 0 3 * * * Europe/Berlin, ..."."""
    if m.get("cron"):
        when_ = f"cron {m['cron']} {m.get('timezone') or 'UTC'}"
    elif m.get("period"):
        when_ = f"every {duration(m['period'])}"
    else:
        return "heartbeat"  # a list's summary carries no schedule
    return f"{when_}, grace {duration(m.get('grace') or 0)}"


def query_name(m: dict[str, Any]) -> str:
    # query_name wins over the url's name when both are set (docs/api.md#monitor-fields)
    return m.get("query_name") or (m.get("url") or "").partition("://")[2] or DASH


def record_type(m: dict[str, Any]) -> str:
    # null means the server's default, A (docs/api.md#monitor-fields)
    return m.get("record_type") or "A"


MONITOR_FIELDS = (
    ("url", "URL"),
    ("type", "Type"),
    ("method", "Method"),
    ("expected_status", "Expected status"),
    ("timeout", "Timeout (s)"),
    ("check_interval", "Interval (s)"),
    ("retry_count", "Retries"),
    ("locations", "Locations"),
    ("follow_redirects", "Follow redirects"),
    ("verify_ssl", "Verify TLS"),
    ("headers", "Headers"),
    ("body", "Body"),
    ("expected_content", "Expect content"),
    ("excluded_content", "Exclude content"),
    ("json_path", "JSONPath"),
    ("expected_json_value", "JSON value"),
    ("degraded_response_time", "Degraded after (ms)"),
    ("tls", "TLS"),
    ("send", "Send"),
    ("expect", "Expect"),
    ("query_name", "Query name"),
    ("record_type", "Record type"),
    ("resolver", "Resolver"),
    ("expected_rcode", "Expected rcode"),
    ("expected_values", "Expected values"),
    ("count", "Echoes"),
    ("max_packet_loss", "Max packet loss (%)"),
    ("key", "Key"),
    ("tags", "Tags"),
    ("depends_on", "Depends on"),
    ("period", "Period"),
    ("grace", "Grace"),
    ("cron", "Cron"),
    ("timezone", "Time zone"),
    ("ping_url", "Ping URL"),
)
# The fields shown only for the types they belong to (as the server's
# models.TYPE_FIELDS); the others are shown for every type.
_FIELD_TYPES = {
    **dict.fromkeys(
        (
            "method",
            "expected_status",
            "follow_redirects",
            "headers",
            "body",
            "expected_content",
            "excluded_content",
            "json_path",
            "expected_json_value",
        ),
        _HTTP,
    ),
    "verify_ssl": (*_HTTP, "tcp"),
    "tls": ("tcp",),
    "send": ("tcp", "udp"),
    "expect": ("tcp", "udp"),
    **dict.fromkeys(
        ("query_name", "record_type", "resolver", "expected_rcode", "expected_values"), ("dns",)
    ),
    "count": ("ping",),
    "max_packet_loss": ("ping",),
    **dict.fromkeys(("period", "grace", "cron", "timezone", "ping_url"), ("heartbeat",)),
    # A heartbeat is pinged: it has no URL, timeout, interval or retries of its own.
    **dict.fromkeys(
        ("url", "timeout", "check_interval", "retry_count"),
        ("http", "https", "tcp", "udp", "ping", "dns"),
    ),
}
# Fields whose null means a value the monitor has all the same.
_SHOWN_AS: dict[str, Callable[[dict[str, Any]], str]] = {
    "query_name": query_name,
    "record_type": record_type,
    "period": lambda m: duration(m["period"]) if m.get("period") else DASH,
    "grace": lambda m: duration(m.get("grace") or 0),
    "depends_on": lambda m: ", ".join(str(i) for i in m.get("depends_on") or []) or "none",
}
MONITOR_STATE = (
    ("uptime_24h", "Uptime 24h"),
    ("uptime_7d", "Uptime 7d"),
    ("uptime_30d", "Uptime 30d"),
    ("response_time", "Response time"),
    ("status_code", "Status code"),
    ("last_error", "Last error"),
    ("last_check", "Last check"),
    ("last_success", "Last success"),
    ("last_failure", "Last failure"),
    ("next_check_at", "Next check"),
    ("next_deadline", "Next deadline"),
    ("last_ping", "Last ping"),
    ("cert_expires_at", "TLS cert expires"),
    ("paused_at", "Paused at"),
    ("pause_reason", "Pause reason"),
    ("created_at", "Created"),
    ("updated_at", "Updated"),
)


def monitor_view(m: dict[str, Any]) -> Table:
    status = status_text(m.get("status"), bool(m.get("paused")), bool(m.get("blocked")))
    rows: list[tuple[str, Any]] = [("Status", status)]
    if m.get("blocked_by"):
        ids = ", ".join(str(i) for i in m["blocked_by"])
        rows.append(("Blocked by", f"{ids} (down, and it depends on them)"))
    if m.get("flapping"):
        rows.append(("Flapping", "yes: alerts are held until it settles"))
    kind = m.get("type")
    rows += [
        (label, _SHOWN_AS[key](m) if key in _SHOWN_AS else m.get(key))
        for key, label in MONITOR_FIELDS
        if key in m and kind in _FIELD_TYPES.get(key, (kind,))
    ]
    for key, label in MONITOR_STATE:
        if key not in m or (key == "status_code" and kind not in _HTTP):
            continue
        if key == "next_check_at" and kind == "heartbeat":
            continue  # the same time as next_deadline, which says what it means
        value = m[key]
        if key.startswith("uptime_"):
            value = pct(value)
        elif key == "response_time":
            value = ms(value)
        elif key == "last_ping":
            value = ping_text(value)
        elif key.endswith(("_at", "_check", "_success", "_failure")):
            value = when(value)
        rows.append((label, value))
    locations = m.get("locations_status") or []
    if len(locations) > 1 or any(loc.get("stale") for loc in locations):
        rows.append(("Locations", "\n".join(_location_text(loc) for loc in locations)))
    return key_values(f"Monitor {m.get('id')}: {m.get('name')}", rows)


def dependencies_view(d: dict[str, Any]) -> Table:
    """``uptime monitors deps``: the chains up (above the monitor) and down (below).

    Each parent's own parents are indented under it, each child's children
    under it: indentation reads "depends on" above, "needed by" below.
    """
    table = Table.grid()
    table.add_column()
    above = _tree_lines(d.get("parents") or [], "parents")
    if above:
        table.add_row(Text("depends on:", style="bold"))
        for line in above:
            table.add_row(line)
    table.add_row(_dependency_node(d.get("monitor") or {}, bold=True))
    below = _tree_lines(d.get("children") or [], "children")
    if below:
        table.add_row(Text("needed by:", style="bold"))
        for line in below:
            table.add_row(line)
    if not above and not below:
        table.add_row(Text("no dependencies either way", style="dim"))
    return table


def _tree_lines(nodes: list[dict[str, Any]], key: str, prefix: str = "") -> list[Text]:
    lines: list[Text] = []
    for i, node in enumerate(nodes):
        last = i == len(nodes) - 1
        lines.append(Text(prefix + ("└─ " if last else "├─ ")) + _dependency_node(node))
        lines += _tree_lines(node.get(key) or [], key, prefix + ("   " if last else "│  "))
    return lines


def _dependency_node(node: dict[str, Any], *, bold: bool = False) -> Text:
    text = Text(f"{node.get('id')} ", style="bold" if bold else "")
    text.append(printable(str(node.get("name") or "")), style="bold" if bold else "")
    text.append("  ")
    text.append_text(status_text(node.get("status"), blocked=bool(node.get("blocked"))))
    if node.get("repeated"):
        text.append(" (shown above)", style="dim")
    return text


def _location_text(loc: dict[str, Any]) -> str:
    """``eu: offline, 2026-… (stale)``: one location's latest run (docs/alerts.md#locations)."""
    text = f"{loc.get('location')}: {loc.get('status') or 'no run yet'}"
    if loc.get("checked_at"):
        text += f", {when(loc['checked_at'])}"
    return text + (" (stale)" if loc.get("stale") else "")


def alerts_view(a: dict[str, Any]) -> Table:
    return key_values(
        "Alert settings",
        [
            ("Email", a.get("email_enabled")),
            ("Recipients", a.get("email_recipients")),
            ("Threshold", f"{a.get('alert_threshold')} failed check run(s)"),
            ("On recovery", a.get("alert_on_recovery")),
            ("Slack", a.get("slack_enabled")),
            ("Slack webhook", a.get("slack_webhook_url")),
            ("Cert expiry", _cert_days(a.get("cert_expiry_days"))),
            ("Recovery", f"{a.get('recovery_threshold', 1)} passed check run(s)"),
            ("Reminders", _every(a.get("reminder_interval"))),
            ("Flap detection", _flap_rule(a)),
            ("Channels", ", ".join(str(i) for i in a.get("channel_ids") or []) or "none"),
            ("Offline when", _quorum_rule(a)),
        ],
    )


def _quorum_rule(a: dict[str, Any]) -> str:
    """``2 locations fail (majority)``: the quorum of docs/alerts.md#locations."""
    effective = a.get("effective_min_failed_locations")
    if effective is None:
        return "-"
    noun = "location fails" if effective == 1 else "locations fail"
    source = "majority" if a.get("min_failed_locations") is None else "set"
    return f"{effective} {noun} ({source})"


def _cert_days(days: Any) -> str:
    if days is None:
        return "-"
    return ", ".join(f"{d}d" for d in days) + " before expiry" if days else "off"


def _every(seconds: int | None) -> str:
    return "off" if seconds is None else f"every {duration(seconds)}"


def _flap_rule(a: dict[str, Any]) -> str:
    threshold = a.get("flap_threshold")
    if threshold is None:
        return "off"
    return f"more than {threshold} changes in {duration(a.get('flap_window') or 0)}"


def ping_text(ping: dict[str, Any] | None) -> str:
    """A ping in one line: when, what (exit code), from where, and its message's start."""
    if not ping:
        return DASH
    kind = ping.get("kind") or ""
    if ping.get("exit_code") is not None:
        kind = f"exit {ping['exit_code']}"
    parts = [when(ping.get("at")), kind, ping.get("source_ip") or ""]
    if ping.get("message"):
        parts.append(repr(ping["message"].splitlines()[0][:60]) if ping["message"] else "")
    return "  ".join(p for p in parts if p)


def history_table(records: list[dict[str, Any]]) -> Table:
    if any(r.get("kind") for r in records):
        return _ping_history_table(records)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("CHECKED AT", "STATUS", "CODE", "RESPONSE", "TRIES", "LOCATION", "ERROR"):
        right = name in ("CODE", "RESPONSE", "TRIES")
        table.add_column(
            name,
            justify="right" if right else "left",
            overflow="fold",
            no_wrap=name != "ERROR",
        )
    for r in records:
        table.add_row(
            cell(when(r.get("checked_at"))),
            status_text(r.get("status")),
            cell(r.get("status_code")),
            cell(ms(r.get("response_time"))),
            cell(r.get("attempts")),
            cell(r.get("location")),
            cell(r.get("error") or ""),
        )
    return table


def _ping_history_table(records: list[dict[str, Any]]) -> Table:
    """A heartbeat's history: each ping's kind, exit code, source and message start."""
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("AT", "STATUS", "PING", "DURATION", "SOURCE", "MESSAGE / ERROR"):
        table.add_column(
            name,
            justify="right" if name == "DURATION" else "left",
            overflow="fold",
            no_wrap=name != "MESSAGE / ERROR",
        )
    for r in records:
        kind = r.get("kind") or "overdue"  # an entry without a ping: the deadline passed
        if r.get("exit_code") is not None:
            kind = f"exit {r['exit_code']}"
        text = r.get("error") or (r.get("message") or "").splitlines()[0:1]
        table.add_row(
            cell(when(r.get("checked_at"))),
            status_text(r.get("status")),
            cell(kind),
            cell(ms(r.get("response_time"))),
            cell(r.get("source_ip") or ""),
            cell(text if isinstance(text, str) else "".join(text)),
        )
    return table


def test_result_view(result: dict[str, Any], monitor: dict[str, Any] | None = None) -> Table:
    """One test run; with its *monitor*, what was checked, and an HTTP status only for http(s)."""
    rows: list[tuple[str, Any]] = []
    if monitor is not None:
        rows += [
            ("Monitor", f"{monitor.get('name')} (#{monitor.get('id')})"),
            ("Type", monitor.get("type")),
            ("Target", target(monitor)),
        ]
    rows.append(("Status", status_text(result.get("status"))))
    if monitor is None or monitor.get("type") in _HTTP:
        rows.append(("Status code", result.get("status_code")))
    rows += [
        ("Response time", ms(result.get("response_time"))),
        ("Checked at", when(result.get("checked_at"))),
        ("Error", result.get("error")),
    ]
    rows += [
        (key.replace("_", " ").capitalize(), value)
        for key, value in result.items()
        if key not in ("status", "status_code", "response_time", "checked_at", "error")
    ]
    return key_values(None, rows)


def bulk_view(result: dict[str, Any]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("ID", justify="right")
    table.add_column("RESULT")
    for monitor_id in result.get("succeeded", []):
        ok = f"{result.get('action')} ok"
        table.add_row(cell(monitor_id), Text(printable(ok), style="green"))
    for failed in result.get("failed", []):
        error = failed.get("error") or {}
        message = f"{error.get('code')}: {error.get('message')}"
        table.add_row(cell(failed.get("id")), Text(printable(message), style="red"))
    return table


# -- notifications and users ----------------------------------------------------


def notifications_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "MONITOR", "TYPE", "STATUS", "ACK", "STARTED", "DURATION", "MESSAGE"):
        table.add_column(
            name,
            justify="right" if name == "ID" else "left",
            overflow="fold",
            no_wrap=name in ("ID", "TYPE", "STATUS", "STARTED", "DURATION"),
        )
    for n in items:
        table.add_row(
            cell(n.get("id")),
            cell(n.get("monitor_name") or n.get("monitor_id")),
            cell(n.get("type") or ""),
            status_text(n.get("status")),
            "✓" if n.get("acknowledged") else "",
            cell(short_when(n.get("started_at"))),
            cell(duration(n.get("duration"))),
            cell(_suppressed_mark(n) + (n.get("message") or "")),
        )
    return table


def _suppressed_mark(n: dict[str, Any]) -> str:
    """A blocked monitor's notification: no alert was sent while its ancestor was down."""
    by = n.get("suppressed_by")
    return "" if by is None else f"[suppressed by #{by}] "


def channels_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "NAME", "TYPE", "MONITORS", "TARGET"):
        table.add_column(name, justify="right" if name == "ID" else "left", overflow="fold")
    for c in items:
        config = c.get("config") or {}
        shown = config.get("recipients") or config.get("url") or config.get("webhook_url") or ""
        if c.get("type") == "pagerduty":
            shown = config.get("routing_key") or ""
        table.add_row(
            cell(c.get("id")),
            cell(c.get("name")),
            cell(c.get("type")),
            cell(", ".join(str(m) for m in c.get("monitor_ids") or []) or "-"),
            cell(", ".join(shown) if isinstance(shown, list) else shown),
        )
    return table


def deliveries_table(items: list[dict[str, Any]]) -> Table:
    table = Table(title="Deliveries", box=None, header_style="bold", pad_edge=False)
    for name in ("CHANNEL", "TYPE", "EVENT", "STATUS", "ATTEMPTS", "NEXT TRY", "LAST ERROR"):
        table.add_column(name, overflow="fold")
    for d in items:
        channel = d.get("channel_name") or (
            "implicit" if d.get("channel_id") is None else "deleted"
        )
        table.add_row(
            cell(channel),
            cell(d.get("channel_type")),
            cell(d.get("event")),
            cell(d.get("status")),
            cell(d.get("attempts")),
            cell(short_when(d.get("next_attempt_at"))),
            cell(d.get("last_error") or ""),
        )
    return table


def notification_view(n: dict[str, Any]) -> Table:
    details = n.get("error_details") or {}
    return key_values(
        f"Notification {n.get('id')} ({n.get('type')})",
        [
            ("Status", status_text(n.get("status"))),
            ("Message", n.get("message")),
            ("Monitor", f"{n.get('monitor_name') or ''} (#{n.get('monitor_id')})"),
            ("Monitor URL", n.get("monitor_url")),
            ("Started", when(n.get("started_at"))),
            ("Resolved", when(n.get("resolved_at"))),
            ("Duration", duration(n.get("duration"))),
            ("Acknowledged", when(n.get("acknowledged_at")) if n.get("acknowledged") else False),
            ("Notified by", n.get("notification_method")),
            ("Email sent", when(n.get("email_sent_at"))),
            ("Status code", details.get("status_code")),
            ("Response time", ms(details.get("response_time"))),
            ("Error", details.get("error_message") or None),
        ],
    )


def user_view(user: dict[str, Any], server: str) -> Table:
    rows: list[tuple[str, Any]] = [
        ("Email", user.get("email")),
        ("Name", user.get("name")),
        ("Signed in with", user.get("provider")),
        ("Server", server),
        ("User id", user.get("id")),
        ("Admin", "yes" if user.get("is_admin") else "no"),
        ("Last login", when(user.get("last_login"))),
    ]
    team = user.get("team")
    if isinstance(team, dict):  # servers before teams do not say
        rows.append(("Team", team_label(team)))
    if user.get("role") is not None:
        rows.append(("Role", user.get("role")))
    return key_values(None, rows)


def team_label(team: dict[str, Any]) -> str:
    """``Ops (ops)``: a team's name and slug."""
    name, slug = team.get("name"), team.get("slug")
    if name and slug:
        return f"{name} ({slug})"
    return str(name or slug or team.get("id") or DASH)


def agents_table(items: list[dict[str, Any]]) -> Table:
    """Probe agents (``uptime server agents``, ``uptime agents list``)."""
    table = Table(box=None, header_style="bold")
    columns = ("ID", "NAME", "LOCATION", "VERSION", "LAST SEEN", "CHECKS/S", "LAG", "STATE")
    for column in (*columns, "EXPIRES"):
        table.add_column(column)
    for a in items:
        state = Text("degraded", style="yellow") if a.get("degraded") else Text("ok", style="green")
        table.add_row(
            str(a.get("id")),
            cell(a.get("name")),
            cell(a.get("location")),
            cell(a.get("version") or "-"),
            when(a.get("last_seen_at")) if a.get("last_seen_at") else "never",
            f"{a['checks_per_second']:.2f}" if a.get("checks_per_second") is not None else "-",
            f"{a['lag_seconds']:.2f}s" if a.get("lag_seconds") is not None else "-",
            state,
            short_when(a.get("expires_at")) if a.get("expires_at") else "never",
        )
    return table
