"""``uptime monitors stats|history|alerts``: what a monitor has recorded and who hears of it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from uptime_cli import charts, output
from uptime_cli.commands import channels
from uptime_cli.commands.options import JsonFlag, MonitorId, parse_span, parse_when
from uptime_cli.context import state

Period = Literal["24h", "7d", "30d", "90d"]
Granularity = Literal["5m", "1h", "1d"]


def register(app: typer.Typer) -> None:
    app.command()(stats)
    app.command()(history)
    app.command()(alerts)


def stats(
    ctx: typer.Context,
    monitor_id: MonitorId,
    period: Annotated[Period, typer.Option(help="Window to cover.")] = "24h",
    granularity: Annotated[
        Granularity | None,
        typer.Option(help="Width of one bucket (default: 1h, or 1d for 90d)."),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Uptime, response times and incidents, with the series drawn as bars."""
    st = state(ctx)
    data = (
        st.client().monitor_stats(monitor_id, period=period, granularity=granularity).get("data")
        or {}
    )
    width = output.out().width
    output.show(st.wants_json(json_), data, lambda d: charts.stats_view(d, width))


def history(
    ctx: typer.Context,
    monitor_id: MonitorId,
    start: Annotated[
        str | None,
        typer.Option("--from", help="ISO 8601 time, or a span back from now: 30m, 2h, 7d."),
    ] = None,
    end: Annotated[str | None, typer.Option("--to", help="ISO 8601 time or a span.")] = None,
    limit: Annotated[
        int | None, typer.Option(help="At most this many (1-1000).", min=1, max=1000)
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Recorded check runs, newest first (default: the last 24 hours, 100 runs)."""
    st = state(ctx)
    body = st.client().monitor_history(
        monitor_id,
        start=parse_when(start, "--from"),
        end=parse_when(end, "--to"),
        limit=limit,
    )
    records, meta = body.get("data") or [], body.get("meta") or {}
    if st.wants_json(json_):
        output.print_json({"data": records, "meta": meta})
        return
    if not records:
        output.info("No check runs in this window.")
        return
    output.out().print(output.history_table(records))
    span = f"from {output.when(meta.get('from'))} to {output.when(meta.get('to'))}"
    more = (
        "; there are more: narrow with --from/--to or raise --limit" if meta.get("has_more") else ""
    )
    output.info(f"{len(records)} check run(s) {span}{more}")


def alerts(
    ctx: typer.Context,
    monitor_id: MonitorId,
    email: Annotated[bool | None, typer.Option("--email/--no-email", help="Send emails.")] = None,
    recipient: Annotated[
        list[str] | None,
        typer.Option("--recipient", metavar="ADDR", help="Email recipient; repeat for more."),
    ] = None,
    threshold: Annotated[
        int | None,
        typer.Option(help="Consecutive failed check runs before alerting.", min=1, max=100),
    ] = None,
    recovery: Annotated[
        bool | None, typer.Option("--recovery/--no-recovery", help="Alert on recovery too.")
    ] = None,
    slack_webhook: Annotated[
        str | None,
        typer.Option(help="Slack incoming-webhook URL (https); also turns Slack on."),
    ] = None,
    slack: Annotated[
        bool | None, typer.Option("--slack/--no-slack", help="Post alerts to Slack.")
    ] = None,
    cert_expiry_days: Annotated[
        str | None,
        typer.Option(
            metavar="DAYS",
            help="Days before a TLS certificate expires to alert, comma-separated "
            "(e.g. 14,7,3,1); 'off' for none.",
        ),
    ] = None,
    recovery_threshold: Annotated[
        int | None,
        typer.Option(help="Consecutive passing check runs before a downtime resolves.", min=1),
    ] = None,
    reminder_interval: Annotated[
        str | None,
        typer.Option(
            metavar="SPAN",
            help="Remind while a downtime stays unacknowledged, every SPAN (30m, 2h, seconds).",
        ),
    ] = None,
    no_reminders: Annotated[
        bool, typer.Option("--no-reminders", help="Turn reminders off.")
    ] = False,
    flap_threshold: Annotated[
        int | None,
        typer.Option(help="Hold alerts after more than N up/down changes in --flap-window.", min=1),
    ] = None,
    flap_window: Annotated[
        str | None, typer.Option(metavar="SPAN", help="Window of --flap-threshold (1h, 30m).")
    ] = None,
    no_flap_detection: Annotated[
        bool, typer.Option("--no-flap-detection", help="Turn flap detection off.")
    ] = False,
    channel: Annotated[
        list[str] | None,
        typer.Option(
            "--channel",
            metavar="NAME",
            help="A channel (name or id) to alert; repeat for more. Replaces the list.",
        ),
    ] = None,
    no_channels: Annotated[
        bool, typer.Option("--no-channels", help="Alert no named channel.")
    ] = False,
    min_failed_locations: Annotated[
        int | None,
        typer.Option(
            help="Offline once N fresh locations fail; fewer failing is a warning.", min=1
        ),
    ] = None,
    majority: Annotated[
        bool,
        typer.Option("--majority", help="Back to the default quorum: a majority of the locations."),
    ] = False,
    json_: JsonFlag = False,
) -> None:
    """Show a monitor's alert settings; with options, change them."""
    st = state(ctx)
    change = _alert_changes(email, recipient, threshold, recovery, slack_webhook, slack)
    if cert_expiry_days is not None:
        change["cert_expiry_days"] = parse_days(cert_expiry_days)
    change.update(
        _noise_changes(
            recovery_threshold,
            parse_span(reminder_interval, "--reminder-interval"),
            no_reminders,
            flap_threshold,
            parse_span(flap_window, "--flap-window"),
            no_flap_detection,
        )
    )
    client = st.client()
    if channel and no_channels:
        raise typer.BadParameter(
            "use --channel or --no-channels, not both", param_hint="'--channel'"
        )
    if channel:
        change["channel_ids"] = channels.channel_ids(client, channel)
    elif no_channels:
        change["channel_ids"] = []
    if min_failed_locations is not None and majority:
        raise typer.BadParameter(
            "use --min-failed-locations or --majority, not both",
            param_hint="'--min-failed-locations'",
        )
    if min_failed_locations is not None or majority:
        change["min_failed_locations"] = min_failed_locations
    if change:
        data = client.update_alerts(monitor_id, change).get("data") or {}
    else:
        data = client.get_alerts(monitor_id).get("data") or {}
    done = f"Updated alert settings of monitor {monitor_id}" if change else None
    output.show(st.wants_json(json_), data, output.alerts_view, done=done)


def parse_days(raw: str) -> list[int]:
    """``14,7,3,1`` → [14, 7, 3, 1]; ``off`` or nothing → []. The server checks the range."""
    text = raw.strip()
    if text.lower() in ("", "off", "none"):
        return []
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise typer.BadParameter(
            f"expected whole days separated by commas, got {raw!r}",
            param_hint="'--cert-expiry-days'",
        ) from None


def _alert_changes(
    email: bool | None,
    recipients: list[str] | None,
    threshold: int | None,
    recovery: bool | None,
    slack_webhook: str | None,
    slack: bool | None,
) -> dict[str, Any]:
    change: dict[str, Any] = {}
    if email is not None:
        change["email_enabled"] = email
    if recipients:
        change["email_recipients"] = list(recipients)
    if threshold is not None:
        change["alert_threshold"] = threshold
    if recovery is not None:
        change["alert_on_recovery"] = recovery
    if slack_webhook is not None:
        change["slack_webhook_url"] = slack_webhook
        change["slack_enabled"] = True if slack is None else slack
    elif slack is not None:
        change["slack_enabled"] = slack
    return change


def _noise_changes(
    recovery_threshold: int | None,
    reminder_interval: int | None,
    no_reminders: bool,
    flap_threshold: int | None,
    flap_window: int | None,
    no_flap_detection: bool,
) -> dict[str, Any]:
    """The noise-control fields the options set (docs/alerts.md)."""
    if no_reminders and reminder_interval is not None:
        raise typer.BadParameter("give --reminder-interval or --no-reminders, not both")
    if no_flap_detection and flap_threshold is not None:
        raise typer.BadParameter("give --flap-threshold or --no-flap-detection, not both")
    change: dict[str, Any] = {}
    if recovery_threshold is not None:
        change["recovery_threshold"] = recovery_threshold
    if no_reminders or reminder_interval is not None:
        change["reminder_interval"] = reminder_interval
    if no_flap_detection or flap_threshold is not None:
        change["flap_threshold"] = flap_threshold
    if flap_window is not None:
        change["flap_window"] = flap_window
    return change
