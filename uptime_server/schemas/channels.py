"""Notification channels: request bodies per type, secrets as hints, responses.

A channel is ``{name, type, config}``; ``config`` holds the fields of its type
(docs/channels.md#types), each type a strict pydantic model with unknown
fields refused. Secret fields (``SECRET_FIELDS``, and the values of
``SECRET_MAPS``: a webhook's headers) leave the server only towards the
channel's service: every response shows them as a hint, the last four
characters behind ``****`` (only ``****`` for a value too short to hide
anything). An edit merges the given config fields into the stored ones; an
omitted secret, or one sent back as its hint, keeps the stored value, except
when the edit points the channel elsewhere (``DESTINATIONS``): then every
stored secret must be sent again, or the edit would hand it to a host its
owner never gave it to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from uptime_server.config import Settings
from uptime_server.errors import validation_error
from uptime_server.notify.channels import CHANNEL_TYPES
from uptime_server.notify.channels.apprise_channel import parse as parse_apprise
from uptime_server.notify.channels.apprise_schemes import vet as vet_apprise
from uptime_server.notify.channels.pagerduty import EVENTS_URL
from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.field_rules import (
    FRAMING_HEADERS,
    MAX_HEADERS,
    MAX_MONITOR_BODY,
    MAX_URL,
    check_http_url,
    check_target_host,
    check_target_literal,
    email_addresses,
    header_syntax,
    https_url,
    no_control,
    strip,
    utf8_at_most,
)
from uptime_server.schemas.requests import Rule, error_message, require_object

ChannelType = Literal["email", "slack", "webhook", "pagerduty", "apprise"]
SECRET_FIELDS: dict[str, tuple[str, ...]] = {
    "email": (),
    "slack": ("webhook_url",),
    "webhook": ("url", "secret"),
    "pagerduty": ("routing_key",),
    "apprise": ("url",),
}
# Secret values of a map field, each shown as a hint (header names stay readable).
SECRET_MAPS: dict[str, tuple[str, ...]] = {"webhook": ("headers",)}
# The field that says where a channel's messages go.
DESTINATIONS = {
    "slack": "webhook_url",
    "webhook": "url",
    "pagerduty": "events_url",
    "apprise": "url",
}
HINT_PREFIX = "****"
# Shorter secrets show no characters at all: four of eight would be half of it.
MIN_HINTED_LENGTH = 12
WEBHOOK_METHODS = ("POST", "PUT", "PATCH")


def hint(value: str | None) -> str | None:
    if not value:
        return value
    return HINT_PREFIX + (value[-4:] if len(value) >= MIN_HINTED_LENGTH else "")


def _http_url(value: str) -> str:
    return check_http_url(value)


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EmailConfig(_Config):
    recipients: Annotated[list[str], email_addresses()] = Field(
        min_length=1, max_length=20, description="1 to 20 addresses."
    )


class SlackConfig(_Config):
    webhook_url: Annotated[str, Field(max_length=MAX_URL), https_url()] = Field(
        description="Slack incoming-webhook URL (https). Secret: shown as a hint."
    )


class WebhookConfig(_Config):
    url: Annotated[str, Field(max_length=MAX_URL)] = Field(
        description="http(s) URL the message is sent to. Secret: shown as a hint."
    )
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    headers: Annotated[dict[str, str], Field(max_length=MAX_HEADERS), header_syntax()] = Field(
        default_factory=dict,
        description="Extra request headers. Secret values: each shown as a hint.",
    )
    body_down: Annotated[str, utf8_at_most(MAX_MONITOR_BODY)] | None = Field(
        None, description="Template of the body of DOWN (and other alert) messages."
    )
    body_up: Annotated[str, utf8_at_most(MAX_MONITOR_BODY)] | None = Field(
        None, description="Template of the body of UP messages."
    )
    secret: Annotated[str, Field(min_length=1, max_length=256)] | None = Field(
        None, description="Signs each body: X-Uptime-Signature. Secret: shown as a hint."
    )

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        return _http_url(v)

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        own = {"host", "content-length", "transfer-encoding", "connection", "idempotency-key"}
        refused = [k for k in v if k.lower() in own or k.lower() == "x-uptime-signature"]
        if refused:
            raise ValueError(
                f"must not set {', '.join(refused)}: delivery sets "
                f"{', '.join(FRAMING_HEADERS)}, Idempotency-Key and X-Uptime-Signature itself"
            )
        return v


class PagerDutyConfig(_Config):
    routing_key: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^\S+$")] = Field(
        description="Events API v2 integration key. Secret: shown as a hint."
    )
    events_url: Annotated[str, Field(max_length=MAX_URL)] = Field(
        EVENTS_URL, description="Events API v2 endpoint."
    )

    @field_validator("events_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return _http_url(v)


class AppriseConfig(_Config):
    url: Annotated[str, Field(min_length=1, max_length=MAX_URL)] = Field(
        description="An Apprise URL (discord://, tgram://, ntfys://, ...). Secret: shown as a hint."
    )

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        no_control(v, "url")
        parse_apprise(v)
        return v


CONFIG_MODELS: dict[str, type[_Config]] = {
    "email": EmailConfig,
    "slack": SlackConfig,
    "webhook": WebhookConfig,
    "pagerduty": PagerDutyConfig,
    "apprise": AppriseConfig,
}
assert tuple(CONFIG_MODELS) == CHANNEL_TYPES


class ChannelCreate(BaseModel):
    """A new channel (the request body's schema)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[
        str,
        Field(min_length=1, max_length=200),
        BeforeValidator(strip),
        Rule("must be 1 to 200 characters", on=("string_too_short", "string_too_long")),
    ]
    type: Annotated[ChannelType, Rule(f"must be one of {', '.join(CHANNEL_TYPES)}")]
    config: dict[str, Any] = Field(
        description="The type's fields (docs/channels.md#types)",
        json_schema_extra={"additionalProperties": True},
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return no_control(v, "name")


class ChannelUpdate(BaseModel):
    """A change of some of a channel's fields; config fields merge into the stored ones."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: (
        Annotated[
            str,
            Field(min_length=1, max_length=200),
            BeforeValidator(strip),
            Rule("must be 1 to 200 characters", on=("string_too_short", "string_too_long")),
        ]
        | None
    ) = None
    type: ChannelType | None = Field(None, description="Cannot change; accepted if the same.")
    config: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        return None if v is None else no_control(v, "name")


def _fields(model: type[BaseModel], data: Any) -> tuple[Any, dict[str, list[str]]]:
    try:
        return model.model_validate(require_object(data)), {}
    except ValidationError as exc:
        details: dict[str, list[str]] = {}
        for err in exc.errors():
            name = ".".join(str(p) for p in err["loc"][:1]) or "body"
            message = "is required" if err["type"] == "missing" else error_message(model, err)
            if message not in details.setdefault(name, []):
                details[name].append(message)
        return None, details


def check_config(kind: str, config: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """*config* validated for *kind*: the stored form, or VALIDATION_ERROR on ``config.<field>``."""
    model = CONFIG_MODELS[kind]
    parsed, details = _fields(model, dict(config))
    if parsed is not None:
        details = _target_errors(kind, parsed, settings)
    if details:
        raise validation_error({f"config.{k}": v for k, v in details.items()})
    return parsed.model_dump(exclude_none=True)


def _target_errors(kind: str, parsed: Any, settings: Settings) -> dict[str, list[str]]:
    """An IP-literal host the guard refuses is refused now (names are judged at send time).

    An Apprise URL is vetted as well: a scheme that opens its own sockets
    needs UPTIME_APPRISE_ALLOW, a parameter naming a file is refused
    (notify/channels/apprise_schemes.py).
    """
    block = settings.block_private_targets
    url_field = {"slack": "webhook_url", "webhook": "url", "pagerduty": "events_url"}.get(kind)
    try:
        if url_field:
            check_target_literal(getattr(parsed, url_field), block_private=block)
        elif kind == "apprise":
            hosts = vet_apprise(
                parsed.url, parse_apprise(parsed.url), allowed=settings.apprise_allow
            )
            for host in hosts:
                check_target_host(host, block_private=block)
    except ValueError as exc:
        return {url_field or "url": [str(exc)]}
    return {}


def parse_create(data: Any, settings: Settings) -> ChannelCreate:
    body, details = _fields(ChannelCreate, data)
    if body is None:
        raise validation_error(details)
    body.config = check_config(body.type, body.config, settings)
    return body


def parse_update(
    kind: str, stored: Mapping[str, Any], data: Any, settings: Settings
) -> tuple[str | None, dict[str, Any]]:
    """(the new name or None, the whole new config) of an edit."""
    body, details = _fields(ChannelUpdate, data)
    if body is None:
        raise validation_error(details)
    if body.type is not None and body.type != kind:
        raise validation_error({"type": [f"cannot change (this channel is {kind})"]})
    config = dict(stored)
    sent: set[str] = set()  # secrets given anew, not kept through their hint
    for key, value in (body.config or {}).items():
        if key in SECRET_FIELDS[kind] and value == hint(stored.get(key)):
            continue  # the hint sent back: keep the secret
        if key in SECRET_MAPS.get(kind, ()) and isinstance(value, dict):
            value, kept = _unhinted(value, stored.get(key))
            if not kept:
                sent.add(key)
        else:
            sent.add(key)
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    _refuse_secrets_to_a_new_place(kind, stored, config, sent)
    return body.name, check_config(kind, config, settings)


def _unhinted(value: dict[str, Any], stored: Any) -> tuple[dict[str, Any], bool]:
    """*value* with each hint sent back replaced by its stored value; whether any was."""
    if not isinstance(stored, dict):
        return value, False
    out, kept = {}, False
    for name, item in value.items():
        if name in stored and item == hint(stored[name]):
            out[name], kept = stored[name], True
        else:
            out[name] = item
    return out, kept


def _refuse_secrets_to_a_new_place(
    kind: str, stored: Mapping[str, Any], config: Mapping[str, Any], sent: set[str]
) -> None:
    """VALIDATION_ERROR when the destination changes and a stored secret would follow it."""
    destination = DESTINATIONS.get(kind)
    if destination is None or config.get(destination) == stored.get(destination):
        return
    secrets = (*SECRET_FIELDS[kind], *SECRET_MAPS.get(kind, ()))
    stale = [f for f in secrets if f != destination and config.get(f) and f not in sent]
    if stale:
        reason = (
            f"must be sent again (not as its hint) when {destination} changes: "
            "the stored value would go to the new address"
        )
        raise validation_error({f"config.{f}": [reason] for f in stale})


def public_config(kind: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """*config* as every response shows it: secrets as hints."""
    shown = dict(config)
    for key in SECRET_FIELDS.get(kind, ()):
        if shown.get(key):
            shown[key] = hint(shown[key])
    for key in SECRET_MAPS.get(kind, ()):
        if isinstance(shown.get(key), dict):
            shown[key] = {name: hint(value) for name, value in shown[key].items()}
    return shown


class Channel(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    name: str
    type: ChannelType
    config: dict[str, Any] = Field(description="The type's fields; secrets as a hint (****abcd)")
    monitor_ids: list[int] = Field(description="Monitors whose alert settings list this channel")
    created_at: UtcTime
    updated_at: UtcTime

    @classmethod
    def of(cls, row: Any, monitor_ids: list[int]) -> Self:
        return cls.from_row(
            row, config=public_config(row.type, row.config), monitor_ids=monitor_ids
        )


class ChannelList(ResponseModel):
    data: list[Channel]


class ChannelTestResult(ResponseModel):
    channel_id: int
    type: ChannelType
    ok: bool = Field(description="Whether the channel's service accepted the test message")
    error: str | None = Field(description="Why not, when ok is false")
    sent_at: UtcTime
