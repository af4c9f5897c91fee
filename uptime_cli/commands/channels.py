"""``uptime channels ...``: named notification channels (docs/channels.md).

A channel is named by its id or its name wherever the commands take one.
Each type's config fields have an option; an option another type has no use
for is a usage error. Secrets (URLs, keys) go to the server and are shown
back only as a hint.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from uptime_cli import output
from uptime_cli.client import ApiClient
from uptime_cli.commands.options import JsonFlag, parse_headers, with_options
from uptime_cli.context import ERROR, CliError, state

app = typer.Typer(help="Notification channels: email, Slack, webhook, PagerDuty, Apprise.")
app.info.no_args_is_help = True

ChannelType = Literal["email", "slack", "webhook", "pagerduty", "apprise"]
ChannelRef = Annotated[str, typer.Argument(help="The channel's id or name.", show_default=False)]

# Which config field each option fills, per type (docs/channels.md#types).
_FIELDS: dict[str, dict[str, str]] = {
    "email": {"recipient": "recipients"},
    "slack": {"url": "webhook_url"},
    "webhook": {
        "url": "url",
        "method": "method",
        "header": "headers",
        "body_down": "body_down",
        "body_up": "body_up",
        "secret": "secret",
    },
    "pagerduty": {"routing_key": "routing_key", "events_url": "events_url"},
    "apprise": {"url": "url"},
}
_OPTION_NAMES = {
    "recipient": "--recipient",
    "url": "--url",
    "method": "--method",
    "header": "--header",
    "body_down": "--body-down",
    "body_up": "--body-up",
    "secret": "--secret",
    "routing_key": "--routing-key",
    "events_url": "--events-url",
}

RecipientOpt = Annotated[
    list[str] | None,
    typer.Option("--recipient", metavar="ADDR", help="email: a recipient; repeat for more."),
]
UrlOpt = Annotated[
    str | None,
    typer.Option(help="slack: webhook URL; webhook: target URL; apprise: the Apprise URL."),
]
MethodOpt = Annotated[str | None, typer.Option(help="webhook: POST (default), PUT or PATCH.")]
HeaderOpt = Annotated[
    list[str] | None,
    typer.Option("--header", metavar='"K: V"', help="webhook: a request header; repeatable."),
]
BodyDownOpt = Annotated[
    str | None, typer.Option("--body-down", help="webhook: body template of DOWN messages.")
]
BodyUpOpt = Annotated[
    str | None, typer.Option("--body-up", help="webhook: body template of UP messages.")
]
SecretOpt = Annotated[
    str | None, typer.Option(help="webhook: signs each body (X-Uptime-Signature).")
]
RoutingKeyOpt = Annotated[
    str | None, typer.Option("--routing-key", help="pagerduty: Events API v2 routing key.")
]
EventsUrlOpt = Annotated[
    str | None, typer.Option("--events-url", help="pagerduty: Events API v2 URL.")
]


CHANNEL_OPTIONS: dict[str, Any] = {
    "recipient": RecipientOpt,
    "url": UrlOpt,
    "method": MethodOpt,
    "header": HeaderOpt,
    "body_down": BodyDownOpt,
    "body_up": BodyUpOpt,
    "secret": SecretOpt,
    "routing_key": RoutingKeyOpt,
    "events_url": EventsUrlOpt,
}
assert CHANNEL_OPTIONS.keys() == _OPTION_NAMES.keys()
with_channel_options = with_options(CHANNEL_OPTIONS, dict, "options")


def _config(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    """The config fields the given options set for a channel of *kind*."""
    fields = _FIELDS[kind]
    config: dict[str, Any] = {}
    for option, value in options.items():
        if value is None or value == []:
            continue
        if option not in fields:
            raise typer.BadParameter(
                f"not an option of {kind} channels", param_hint=f"'{_OPTION_NAMES[option]}'"
            )
        if option == "header":
            value = parse_headers(value)
        elif option == "method":
            value = value.upper()
        config[fields[option]] = list(value) if option == "recipient" else value
    return config


def resolve(client: ApiClient, ref: str) -> dict[str, Any]:
    """The channel named *ref* (an id, or a name of one of the caller's channels)."""
    channels = client.list_channels().get("data") or []
    if ref.isdigit():
        for channel in channels:
            if channel.get("id") == int(ref):
                return channel
    matches = [c for c in channels if c.get("name") == ref]
    if not matches:
        raise CliError(f"no channel named {ref!r} (see `uptime channels list`)", ERROR)
    return matches[0]


def channel_view(c: dict[str, Any]) -> Any:
    rows = [("Type", c.get("type"))]
    rows += [(key, value) for key, value in (c.get("config") or {}).items()]
    rows += [
        ("Monitors", ", ".join(str(m) for m in c.get("monitor_ids") or []) or "none"),
        ("Created", output.when(c.get("created_at"))),
        ("Updated", output.when(c.get("updated_at"))),
    ]
    return output.key_values(f"Channel {c.get('id')}: {c.get('name')}", rows)


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """The caller's channels."""
    st = state(ctx)
    items = st.client().list_channels().get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
        return
    if not items:
        output.info("No channels. Add one with `uptime channels add NAME --type TYPE ...`.")
        return
    output.out().print(output.channels_table(items))


@app.command()
@with_channel_options
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A name of your choice, unique among yours.")],
    type_: Annotated[ChannelType, typer.Option("--type", help="The channel's type.")],
    json_: JsonFlag = False,
    *,
    options: dict[str, Any],
) -> None:
    """Create a channel."""
    st = state(ctx)
    config = _config(type_, options)
    body = {"name": name, "type": type_, "config": config}
    data = st.client().create_channel(body).get("data") or {}
    done = f"Added {type_} channel {data.get('id')} ({data.get('name')})"
    output.show(st.wants_json(json_), data, channel_view, done=done)


@app.command()
def show(ctx: typer.Context, channel: ChannelRef, json_: JsonFlag = False) -> None:
    """One channel: its config (secrets as hints) and the monitors using it."""
    st = state(ctx)
    client = st.client()
    data = client.get_channel(resolve(client, channel)["id"]).get("data") or {}
    output.show(st.wants_json(json_), data, channel_view)


@app.command()
@with_channel_options
def edit(
    ctx: typer.Context,
    channel: ChannelRef,
    name: Annotated[str | None, typer.Option(help="New name.")] = None,
    json_: JsonFlag = False,
    *,
    options: dict[str, Any],
) -> None:
    """Change a channel; options not given (secrets included) keep their values."""
    st = state(ctx)
    client = st.client()
    current = resolve(client, channel)
    config = _config(current["type"], options)
    body: dict[str, Any] = {"config": config}
    if name is not None:
        body["name"] = name
    if not config and name is None:
        raise typer.BadParameter("give at least one option to change", param_hint="'OPTIONS'")
    data = client.update_channel(current["id"], body).get("data") or {}
    done = f"Updated channel {data.get('id')} ({data.get('name')})"
    output.show(st.wants_json(json_), data, channel_view, done=done)


@app.command()
def delete(
    ctx: typer.Context,
    channel: ChannelRef,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    json_: JsonFlag = False,
) -> None:
    """Delete a channel; the monitors using it stop using it."""
    st = state(ctx)
    client = st.client()
    current = resolve(client, channel)
    if not yes:
        typer.confirm(f"Delete channel {current['id']} ({current['name']})?", abort=True, err=True)
    response = client.delete_channel(current["id"])
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Deleted channel {current['id']} ({current['name']})")


@app.command()
def test(ctx: typer.Context, channel: ChannelRef, json_: JsonFlag = False) -> None:
    """Send a test message now; exits 1 when the channel's service did not accept it."""
    st = state(ctx)
    client = st.client()
    current = resolve(client, channel)
    result = client.test_channel(current["id"]).get("data") or {}
    if st.wants_json(json_):
        output.print_json(result)
    elif result.get("ok"):
        output.success(f"Test message accepted by channel {current['id']} ({current['name']})")
    else:
        output.failure(f"Test message not delivered: {result.get('error')}")
    if not result.get("ok"):
        raise typer.Exit(ERROR)


def channel_ids(client: ApiClient, refs: list[str]) -> list[int]:
    """Ids of the channels named by *refs* (ids or names), in order."""
    return [resolve(client, ref)["id"] for ref in refs]
