"""Monitor configuration and alert-settings bodies → typed values, or a VALIDATION_ERROR.

Bodies are validated by pydantic models in strict mode (``"30"`` is not an
integer) with unknown fields refused by name. The update of a monitor merges
the change into the stored configuration and validates the result as a whole,
so a monitor can never be saved half-valid. One answer names every bad field
of a body, the rules between fields included (``_validate``). Field rules:
``schemas.field_rules``; rules and defaults: docs/api.md#monitor-fields.
Query-string parameters are parsed by ``uptime_server.wsgi.query_params``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dns.rcode
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from uptime_server.checks.dependencies import MAX_PARENTS
from uptime_server.checks.json_path import MAX_LENGTH as JSON_PATH_MAX_LENGTH
from uptime_server.checks.json_path import validate_json_path
from uptime_server.checks.payload import parse_escapes
from uptime_server.config import Settings
from uptime_server.db import INT64_MAX
from uptime_server.errors import ApiError, validation_error
from uptime_server.heartbeats.schedule import fires, valid_cron
from uptime_server.models import (
    DEFAULT_CERT_EXPIRY_DAYS,
    DEFAULT_EXPECTED_STATUS,
    MONITOR_TYPES,
    TYPE_FIELDS,
)
from uptime_server.net.target import (
    host_port_url,
    parse_host_port,
    parse_host_port_url,
    parse_host_url,
)
from uptime_server.schemas.field_rules import (
    FRAMING_HEADERS,
    MAX_CHECK_INTERVAL,
    MAX_HEADERS,
    MAX_MONITOR_BODY,
    MAX_URL,
    METHOD_PATTERN,
    METHODS,
    URL_TOO_LONG,
    check_http_url,
    check_target_host,
    check_target_literal,
    dedupe,
    email_addresses,
    header_syntax,
    https_url,
    no_control,
    no_nul,
    strip,
    utf8_at_most,
)
from uptime_server.schemas.requests import Rule, error_message
from uptime_server.schemas.tags import Key, Tags

MAX_PAYLOAD = 1024  # characters of a tcp/udp send or expect
MAX_PERIOD = 365 * 86400  # seconds, of a heartbeat
MAX_GRACE = 30 * 86400
DEFAULT_GRACE = 300
MAX_EXPECTED_VALUES = 20
RECORD_TYPES = ("A", "AAAA", "CNAME", "MX", "NS", "TXT", "SOA", "SRV", "CAA", "PTR")
# What a type's own fields are when a body leaves them out: stored so and
# shown so, as http's method and expected_status are (docs/api.md#monitor-fields).
# A field of another type keeps its null.
TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "dns": {"expected_rcode": "NOERROR"},
    "ping": {"count": 3, "max_packet_loss": 0.0},
}


def _sorted_ids(value: Any) -> Any:
    """A list of ids → sorted, repeats collapsed (anything else is left to the type check)."""
    if isinstance(value, list) and all(type(item) is int for item in value):
        return sorted(set(value))
    return value


# Checked against the team's graph by services/dependencies.py (cycles, depth,
# whose ids they are); here only the shape.
DependsOn = Annotated[
    list[Annotated[int, Field(ge=1, le=INT64_MAX)]],
    Field(max_length=MAX_PARENTS),
    BeforeValidator(_sorted_ids),
    Rule(f"must list at most {MAX_PARENTS} monitor ids", on=("too_long",)),
    Rule("must be a list of monitor ids", on=("list_type", "int_type")),
    Rule("must be monitor ids (positive integers)", on=("greater_than_equal", "less_than_equal")),
]


def type_defaults_missing(kind: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults of *kind*'s own fields that *values* leaves null (a row stored before
    they were stored too reads as the monitor is checked)."""
    return {k: v for k, v in TYPE_DEFAULTS.get(kind, {}).items() if values.get(k) is None}


class _JudgedWhole(BaseModel):
    """A body whose rules between fields run once every field is valid on its own."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="after")
    def _whole(self) -> _JudgedWhole:
        errors = self.cross_field_errors(self.__dict__)
        if errors:
            raise _FieldErrors(errors)
        return self

    @staticmethod
    def cross_field_errors(v: Mapping[str, Any]) -> dict[str, str]:
        """The rules between fields over *v*; a field missing from it is left out."""
        return {}


class MonitorConfig(_JudgedWhole):
    """A monitor's whole configuration, as stored."""

    # json_schema_extra documents, for the OpenAPI document, rules that the
    # validators below enforce (strip, byte length, settings-bound values).
    name: Annotated[
        str,
        Field(min_length=1, max_length=200),
        BeforeValidator(strip),
        Rule("must be 1 to 200 characters", on=("string_too_short", "string_too_long")),
    ] = Field(description="1 to 200 characters after stripping; no control characters.")
    type: Literal["http", "https", "tcp", "udp", "ping", "dns", "heartbeat"] = Field(
        description="http, https, tcp, udp, dns and ping; each is checked by its own probe. "
        "heartbeat: pinged by the job it watches (its ping_url), no url."
    )
    url: Annotated[Annotated[str, Field(max_length=MAX_URL)] | None, URL_TOO_LONG] = Field(
        None,
        description="Absolute http(s) URL with a host for http and https (https for type "
        "https); tcp://host:port for tcp, udp://host:port for udp (host:port alone is "
        "stored so; IPv6 in brackets), ping://host for ping; "
        "required for these. dns://query_name for dns (or query_name; one is required).",
    )
    method: Annotated[
        str,
        Field(pattern=METHOD_PATTERN),
        AfterValidator(str.upper),
        Rule(f"must be one of {', '.join(METHODS)}", on=("string_pattern_mismatch",)),
    ] = Field("GET", description="Case-insensitive in, upper-case out.")
    expected_status: Annotated[
        list[Annotated[int, Field(ge=100, le=599)]],
        Field(min_length=1, max_length=50),
        AfterValidator(lambda codes: list(dict.fromkeys(codes))),
        Rule("must list 1 to 50 status codes", on=("too_short", "too_long")),
        Rule(
            "each status code must be between 100 and 599",
            on=("greater_than_equal", "less_than_equal"),
        ),
    ] = Field(default_factory=lambda: list(DEFAULT_EXPECTED_STATUS))
    timeout: int = Field(30, ge=5, le=300, description="Seconds; at most check_interval.")
    check_interval: Annotated[int, Field(le=MAX_CHECK_INTERVAL)] = Field(
        60, description="Seconds; the lower bound is UPTIME_MIN_CHECK_INTERVAL."
    )
    retry_count: int = Field(0, ge=0, le=10)
    locations: Annotated[
        Annotated[list[str], Field(min_length=1, max_length=10)] | None,
        BeforeValidator(dedupe),
        Rule("must list 1 to 10 locations", on=("too_short", "too_long")),
    ] = Field(
        None, description="Locations known to the server (UPTIME_LOCATIONS); default its first."
    )
    follow_redirects: bool = True
    verify_ssl: bool = True
    headers: Annotated[
        dict[str, str],
        Field(max_length=MAX_HEADERS),
        header_syntax(),
        Rule(f"at most {MAX_HEADERS} headers", on=("too_long",)),
    ] = Field(
        default_factory=dict,
        description="Up to 50 request headers; names are RFC 7230 tokens, no CR/LF in values; "
        "Host, Content-Length, Transfer-Encoding and Connection are set by the check itself.",
    )
    body: Annotated[str, utf8_at_most(MAX_MONITOR_BODY)] | None = Field(
        None, description="Request body sent by the check; at most 64 KiB of UTF-8."
    )
    expected_content: str | None = Field(None, max_length=1024)
    excluded_content: str | None = Field(None, max_length=1024)
    json_path: str | None = Field(
        None,
        max_length=JSON_PATH_MAX_LENGTH,
        description="A JSONPath expression: at most one `..`, two wildcards, no regex.",
    )
    expected_json_value: str | None = Field(
        None, max_length=1024, description="Requires json_path."
    )
    degraded_response_time: int | None = Field(
        None, ge=1, le=300_000, description="Milliseconds; null = off."
    )
    badges: bool = Field(
        False,
        description="Public SVG badges at /badge/{badge_token}/...; the monitor then shows "
        "its badge_token (docs/status-pages.md#badges).",
    )
    # The fields of one type only (models.TYPE_FIELDS; the others refuse them).
    tls: bool = Field(False, description="tcp: TLS handshake after connecting.")
    send: str | None = Field(
        None,
        max_length=MAX_PAYLOAD,
        description="tcp, udp: text sent after connecting; escapes \\n \\r \\t \\0 \\\\ \\xHH.",
    )
    expect: str | None = Field(
        None, max_length=MAX_PAYLOAD, description="tcp, udp: text the reply must contain."
    )
    query_name: str | None = Field(None, min_length=1, max_length=253, description="dns.")
    record_type: Literal[*RECORD_TYPES] | None = Field(  # type: ignore[valid-type]
        None, description="dns: the record type queried."
    )
    resolver: str | None = Field(
        None, max_length=300, description="dns: host[:port] of the resolver; null = the system's."
    )
    expected_rcode: (
        Annotated[
            str,
            Field(pattern=r"^[A-Za-z]{1,16}$"),
            AfterValidator(str.upper),
            Rule(
                "must be an rcode name such as NOERROR or NXDOMAIN", on=("string_pattern_mismatch",)
            ),
        ]
        | None
    ) = Field(None, description="dns: e.g. NOERROR (the default for dns), NXDOMAIN.")
    expected_values: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=1024)]] | None,
        Field(max_length=MAX_EXPECTED_VALUES),
        Rule(f"must list at most {MAX_EXPECTED_VALUES} values", on=("too_long",)),
    ] = Field(None, description="dns: values the answer must all contain.")
    count: int | None = Field(
        None, ge=1, le=10, description="ping: echoes per check; 3 for ping when omitted."
    )
    max_packet_loss: float | None = Field(
        None,
        ge=0,
        le=100,
        description="ping: percent of echoes that may be lost; 0 for ping when omitted.",
    )
    # Of every type (schemas/tags.py).
    key: Key = Field(
        None,
        description="A stable name for `uptime apply` to match by; unique among your "
        "monitors; null = none (apply matches by name).",
    )
    tags: Tags = Field(
        default_factory=list,
        description="Up to 20 labels: lowercase letters, digits, '_', '.', '-' (1 to 32 "
        "characters); folded to lowercase, repeats collapsed, sorted.",
    )
    depends_on: DependsOn = Field(
        default_factory=list,
        description=f"Ids of the team's monitors this one depends on, at most {MAX_PARENTS}: "
        "while one of them (or one up its chain) is down, this one is blocked. No cycles, "
        "chains at most 10 deep (docs/monitors.md#dependencies). Sorted, repeats collapsed.",
    )

    period: Annotated[int, Field(le=MAX_PERIOD)] | None = Field(
        None,
        description="heartbeat: seconds between pings (or cron). At least the server's "
        "UPTIME_MIN_CHECK_INTERVAL, at most 365 days.",
    )
    grace: Annotated[int, Field(ge=0, le=MAX_GRACE)] | None = Field(
        None,
        description=f"heartbeat: seconds a ping may be late; default {DEFAULT_GRACE}, "
        "at most 30 days.",
    )
    cron: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description="heartbeat: a 5-field cron expression of when pings are expected."
    )
    timezone: Annotated[str, Field(min_length=1, max_length=64)] | None = Field(
        None, description="heartbeat, with cron: IANA time zone of the cron expression; UTC."
    )

    @field_validator("period")
    @classmethod
    def _period(cls, v: int | None, info: ValidationInfo) -> int | None:
        low = _settings(info).min_check_interval
        if v is not None and v < low:
            raise ValueError(f"must be between {low} and {MAX_PERIOD} seconds")
        return v

    @field_validator("cron")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        if v is not None and not valid_cron(v.strip()):
            raise ValueError("must be a cron expression of 5 fields, e.g. '0 3 * * *'")
        if v is not None and not fires(v.strip()):
            raise ValueError("must be a cron expression that fires: this one gives no date")
        return v.strip() if v else None

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("must be an IANA time zone name, e.g. Europe/Berlin") from None
        return v

    @model_validator(mode="after")
    def _type_defaults(self) -> MonitorConfig:
        for name, value in type_defaults_missing(self.type, self.__dict__).items():
            setattr(self, name, value)
        return self

    @model_validator(mode="after")
    def _heartbeat_defaults(self) -> MonitorConfig:
        if self.type == "heartbeat":
            self.grace = DEFAULT_GRACE if self.grace is None else self.grace
            self.timezone = (self.timezone or "UTC") if self.cron else None
        return self

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return no_control(v, "name")

    @field_validator("check_interval", mode="wrap")
    @classmethod
    def _interval(cls, v: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> int:
        # The lower bound is the server's; one message names both bounds.
        low = _settings(info).min_check_interval
        message = f"must be between {low} and {MAX_CHECK_INTERVAL} seconds"
        try:
            v = handler(v)
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "less_than_equal":
                raise ValueError(message) from None
            raise
        if v < low:
            raise ValueError(message)
        return v

    @field_validator("locations")
    @classmethod
    def _locations(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if v is None:
            return None
        known = _settings(info).locations
        unknown = [loc for loc in v if loc not in known]
        if unknown:
            raise ValueError(f"unknown location(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return v

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        framing = {name.lower() for name in FRAMING_HEADERS}
        refused = [key for key in v if key.lower() in framing]
        if refused:
            raise ValueError(
                f"must not set {', '.join(refused)}: the check sets "
                f"{', '.join(FRAMING_HEADERS)} itself"
            )
        return v

    @field_validator("send")
    @classmethod
    def _send(cls, v: str | None) -> str | None:
        if not v:
            return None
        parse_escapes(v)  # its ValueError names the bad escape
        return v

    @field_validator("expect", "query_name")
    @classmethod
    def _expect(cls, v: str | None) -> str | None:
        return no_nul(v) if v else None

    @field_validator("query_name")
    @classmethod
    def _query_name(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return parse_host_url(f"dns://{v}", "dns")
        except ValueError:
            raise ValueError("must be a DNS name (or an IP address for PTR)") from None

    @field_validator("expected_rcode")
    @classmethod
    def _rcode(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            dns.rcode.from_text(v)
        except dns.rcode.UnknownRcode:
            raise ValueError("must be an rcode name such as NOERROR or NXDOMAIN") from None
        return v

    @field_validator("resolver")
    @classmethod
    def _resolver(cls, v: str | None, info: ValidationInfo) -> str | None:
        if not v:
            return None
        host, _ = parse_host_port(v, 53)
        check_target_host(host, block_private=_settings(info).block_private_targets)
        return v

    @field_validator("url", "body", "json_path")
    @classmethod
    def _no_nul(cls, v: str | None) -> str | None:
        return no_nul(v)

    @field_validator("expected_content", "excluded_content", "expected_json_value")
    @classmethod
    def _empty_is_none(cls, v: str | None) -> str | None:
        return no_nul(v) if v else None

    @field_validator("json_path")
    @classmethod
    def _json_path(cls, v: str | None) -> str | None:
        if not v:
            return None
        # It must parse and stay within what the engine evaluates (engine/json_path).
        error = validate_json_path(v)
        if error:
            raise ValueError(error)
        return v

    @field_validator("url")
    @classmethod
    def _url(cls, v: str | None, info: ValidationInfo) -> str | None:
        # A field validator (type is declared before url), so a bad URL is
        # reported together with every other bad field, not after them.
        if v is None:
            return None
        kind = info.data.get("type")
        if kind in ("http", "https"):
            v = check_http_url(v, require_https=kind == "https")
            check_target_literal(v, block_private=_settings(info).block_private_targets)
            return v
        if kind in ("tcp", "udp"):
            v = host_port_url(v, kind)  # host:port is stored as tcp://host:port
            host, _ = parse_host_port_url(v, kind)
            check_target_host(host, block_private=_settings(info).block_private_targets)
            return v
        if kind == "ping":
            host = parse_host_url(v, "ping")
            check_target_host(host, block_private=_settings(info).block_private_targets)
            return v
        if kind == "dns":
            parse_host_url(v, "dns")  # the query name, not a target: no guard
            return v
        if len(v) > MAX_URL or not v.strip():
            raise ValueError(f"must be 1 to {MAX_URL} characters")
        return v

    @model_validator(mode="after")
    def _default_locations(self, info: ValidationInfo) -> MonitorConfig:
        if self.locations is None:
            self.locations = [_settings(info).locations[0]]
        return self

    @staticmethod
    def cross_field_errors(v: Mapping[str, Any]) -> dict[str, str]:
        """The rules between fields, over values that are valid on their own.

        A field missing from *v* broke its own rules and takes part in none of
        these, so a body is judged on every rule it can be judged on at once.
        """
        errors: dict[str, str] = {}
        if _given(v, "type") and v["type"] == "heartbeat":
            errors.update(_heartbeat_errors(v))
        if _given(v, "type", "url") and v["type"] in _URL_TYPES and not v["url"]:
            errors["url"] = "is required for http, https, tcp, udp and ping monitors"
        if _given(v, "type", "url", "query_name") and v["type"] == "dns":
            errors.update(_dns_name_errors(v["url"], v["query_name"]))
        if _given(v, "timeout", "check_interval") and v["timeout"] > v["check_interval"]:
            errors["timeout"] = "must not exceed check_interval"
        json_value = _given(v, "expected_json_value", "json_path") and v["expected_json_value"]
        if json_value and not v["json_path"]:
            errors["expected_json_value"] = "requires json_path"
        return errors


_URL_TYPES = ("http", "https", "tcp", "udp", "ping")


def _heartbeat_errors(v: Mapping[str, Any]) -> dict[str, str]:
    """A heartbeat has a period or a cron (not both), one location, no url, no retries."""
    errors: dict[str, str] = {}
    if _given(v, "period", "cron"):
        if v["period"] is None and v["cron"] is None:
            errors["period"] = "is required for heartbeat monitors (or cron)"
        elif v["period"] is not None and v["cron"] is not None:
            errors["cron"] = "cannot be given with period: one schedule or the other"
    if _given(v, "timezone", "cron", "period") and v["timezone"] and v["period"] is not None:
        errors["timezone"] = "applies only with cron"
    if _given(v, "url") and v["url"]:
        errors["url"] = "must not be set for heartbeat monitors: they are pinged"
    if _given(v, "retry_count") and v["retry_count"]:
        errors["retry_count"] = "does not apply to heartbeat monitors"
    if _given(v, "locations") and v["locations"] and len(v["locations"]) > 1:
        errors["locations"] = "a heartbeat monitor has one location"
    return errors


def _dns_name_errors(url: str | None, query_name: str | None) -> dict[str, str]:
    """A dns monitor names its query by url (dns://name), query_name, or both alike."""
    if not url and not query_name:
        return {"url": "is required for dns monitors (dns://query_name), or query_name"}
    if url and query_name:
        named = parse_host_url(url, "dns")  # valid: url passed its own rule
        if named.lower().rstrip(".") != query_name.lower().rstrip("."):
            return {"query_name": "must be the name in url when both are given"}
    return {}


def foreign_field_errors(kind: Any, sent: Mapping[str, Any]) -> dict[str, str]:
    """The fields *sent* by the client that belong to types other than *kind*.

    Only what the client sent counts (the stored configuration carries the
    defaults of every field), and only with a value other than the field's
    default: ``"method": "GET"`` on a tcp monitor changes nothing.
    """
    own = TYPE_FIELDS.get(kind) if isinstance(kind, str) else None
    if own is None:
        return {}
    errors: dict[str, str] = {}
    fields = MonitorConfig.model_fields
    for name, value in sent.items():
        owners = [t for t, names in TYPE_FIELDS.items() if name in names]
        if not owners or name in own:
            continue
        if value == fields[name].get_default(call_default_factory=True):
            continue
        errors[name] = f"applies only to {', '.join(owners)} monitors"
    return errors


def _own_fields(kind: Any, config: Mapping[str, Any]) -> dict[str, Any]:
    """*config* less the fields of other types, which then take their defaults."""
    own = TYPE_FIELDS.get(kind, ()) if isinstance(kind, str) else ()
    foreign = {name for names in TYPE_FIELDS.values() for name in names} - set(own)
    return {name: value for name, value in config.items() if name not in foreign}


MAX_LOCATIONS = 10  # of a monitor (MonitorConfig.locations)
MAX_CERT_EXPIRY_DAYS = 10
MAX_CERT_EXPIRY_DAY = 365
MAX_REMINDER_INTERVAL = 7 * 86400
MAX_FLAP_WINDOW = 86400


def _distinct_descending(days: list[int]) -> list[int]:
    if len(set(days)) != len(days):
        raise ValueError("must not repeat a threshold")
    return sorted(days, reverse=True)


class AlertSettingsIn(_JudgedWhole):
    """Alert settings of one monitor, as stored (docs/api.md#alert-settings)."""

    email_enabled: bool = True
    email_recipients: Annotated[list[str], email_addresses()] = Field(
        default_factory=list,
        max_length=20,
        description="Up to 20 addresses; an empty list means the monitor owner's address. "
        "Only the syntax is checked: root@localhost or ops@host.local are fine.",
    )
    slack_enabled: bool = False
    slack_webhook_url: Annotated[
        Annotated[str, Field(max_length=MAX_URL), https_url()] | None, URL_TOO_LONG
    ] = Field(None, description="https URL; required when slack_enabled is true.")
    alert_on_recovery: bool = True
    alert_threshold: int = Field(
        1, ge=1, le=100, description="Consecutive failed runs before a downtime notification."
    )
    cert_expiry_days: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_CERT_EXPIRY_DAY)]],
        Field(max_length=MAX_CERT_EXPIRY_DAYS, json_schema_extra={"uniqueItems": True}),
        AfterValidator(_distinct_descending),
        Rule(f"must list at most {MAX_CERT_EXPIRY_DAYS} thresholds", on=("too_long",)),
        Rule(
            f"each threshold must be between 1 and {MAX_CERT_EXPIRY_DAY} days",
            on=("greater_than_equal", "less_than_equal"),
        ),
    ] = Field(
        default_factory=lambda: list(DEFAULT_CERT_EXPIRY_DAYS),
        description="Days before a TLS certificate expires (https, tcp with tls) that each "
        "send one cert_expiry alert; distinct, stored largest first. [] turns them off.",
    )
    recovery_threshold: int = Field(
        1,
        ge=1,
        le=100,
        description="Consecutive passing runs before a downtime resolves; "
        "the monitor stays offline until then.",
    )
    reminder_interval: int | None = Field(
        None,
        ge=60,
        le=MAX_REMINDER_INTERVAL,
        description="Seconds between reminders while a downtime stays active and "
        "unacknowledged; null: no reminders.",
    )
    flap_threshold: int | None = Field(
        6,
        ge=1,
        le=100,
        description="More up/down changes than this within flap_window hold the alerts "
        "(flapping); null: no flap detection.",
    )
    flap_window: int = Field(
        3600, ge=60, le=MAX_FLAP_WINDOW, description="Seconds; the window of flap_threshold."
    )
    channel_ids: Annotated[
        list[Annotated[int, Field(ge=1, le=INT64_MAX)]],
        Field(max_length=50),
        AfterValidator(lambda v: list(dict.fromkeys(v))),
        Rule("must be a list of at most 50 ids of your channels"),
    ] = Field(
        default_factory=list,
        description="Ids of the caller's channels (/channels) that get this monitor's alerts.",
    )
    min_failed_locations: int | None = Field(
        None,
        ge=1,
        le=MAX_LOCATIONS,
        description="Fresh locations that must fail for the monitor to be offline (fewer "
        "failing: warning), from 1 to the monitor's number of locations; null: a majority "
        "of its locations (n // 2 + 1).",
    )

    @staticmethod
    def cross_field_errors(v: Mapping[str, Any]) -> dict[str, str]:
        """As ``MonitorConfig.cross_field_errors``: fields missing from *v* are left out."""
        needs_url = _given(v, "slack_enabled", "slack_webhook_url") and v["slack_enabled"]
        if needs_url and not v["slack_webhook_url"]:
            return {"slack_webhook_url": "is required when slack_enabled is true"}
        return {}


class _FieldErrors(ValueError):
    """Cross-field errors raised from a model validator, keyed by field."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k} {v}" for k, v in errors.items()))
        self.errors = errors


def _given(values: Mapping[str, Any], *names: str) -> bool:
    """Whether every one of *names* is among the fields valid on their own."""
    return all(name in values for name in names)


def _settings(info: ValidationInfo) -> Settings:
    return (info.context or {})["settings"]


def parse_monitor(data: Any, settings: Settings) -> MonitorConfig:
    """Validate a create body."""
    body = _require_object(data)
    return _monitor_or_error(body, settings, sent=body)


def parse_monitor_update(
    current: Mapping[str, Any], patch: Any, settings: Settings
) -> MonitorConfig:
    """Validate *patch* merged into the *current* configuration, as a whole.

    The fields of types other than the resulting one are dropped from
    *current* (a monitor changed from http to tcp loses its method), and
    refused in *patch*.
    """
    patch = _require_object(patch)
    kind = patch.get("type", current.get("type"))
    return _monitor_or_error({**_own_fields(kind, current), **patch}, settings, sent=patch)


# A valid target of each type, for judging a change's fields without a monitor.
_TEMPLATE_URLS = {
    "http": "http://template.invalid/",
    "https": "https://template.invalid/",
    "tcp": "tcp://template.invalid:1",
    "udp": "udp://template.invalid:1",
    "dns": "dns://template.invalid",
    "ping": "ping://template.invalid",
}


def _patch_type(patch: Mapping[str, Any]) -> str:
    """The type a change's fields are judged as: its own, else its URL's scheme, else http.

    The change applies to monitors of any type (a bulk update); each one's
    merged configuration is judged later against that monitor's type.
    """
    kind = patch.get("type")
    if isinstance(kind, str) and kind in _TEMPLATE_URLS:
        return kind
    url = patch.get("url")
    scheme = url.partition("://")[0].lower() if isinstance(url, str) and "://" in url else ""
    return scheme if scheme in _TEMPLATE_URLS else "http"


def check_patch_fields(patch: Mapping[str, Any], settings: Settings) -> None:
    """Validate each field of a partial change on its own (types, bounds, names).

    Cross-field rules need the monitor the change applies to, so they are
    left to ``parse_monitor_update``; this catches what is wrong everywhere.
    """
    kind = _patch_type(patch)
    template = {"name": "template", "type": kind, "url": _TEMPLATE_URLS[kind]}
    _, details = _validate(MonitorConfig, {**template, **patch}, settings, cross_field=False)
    if details:
        raise _monitor_error(details, patch)


def parse_alert_settings(current: Mapping[str, Any], patch: Any) -> AlertSettingsIn:
    alerts, details = _validate(AlertSettingsIn, {**current, **_require_object(patch)}, None)
    if details:
        raise validation_error(details)
    return alerts


def quorum_errors(alerts: AlertSettingsIn, locations: Sequence[str]) -> dict[str, list[str]]:
    """``min_failed_locations`` beyond the monitor's number of locations, as error details."""
    wanted = alerts.min_failed_locations
    if wanted is None or wanted <= len(locations):
        return {}
    count = len(locations)
    return {
        "min_failed_locations": [
            f"must be between 1 and {count}, the monitor's number of locations"
        ]
    }


def _require_object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise validation_error(
            {"body": ["must be a JSON object"]}, "Request body must be a JSON object"
        )
    return data


def _monitor_or_error(
    body: dict[str, Any], settings: Settings, *, sent: Mapping[str, Any]
) -> MonitorConfig:
    cfg, details = _validate(MonitorConfig, body, settings)
    for field, message in foreign_field_errors(body.get("type"), sent).items():
        details.setdefault(field, [message])
    if details:
        raise _monitor_error(details, body)
    return cfg


def _monitor_error(details: dict[str, list[str]], body: Mapping[str, Any]) -> ApiError:
    """VALIDATION_ERROR, or INVALID_MONITOR_TYPE for an unknown type; both name every bad field."""
    kind = body.get("type")
    if isinstance(kind, str) and kind not in MONITOR_TYPES:
        details["type"] = [f"must be one of {', '.join(MONITOR_TYPES)}"]
        return ApiError(
            "INVALID_MONITOR_TYPE",
            f"Unsupported monitor type {kind[:32]!r}; supported: {', '.join(MONITOR_TYPES)}",
            details,
        )
    return validation_error(details)


def _validate(
    model: type[MonitorConfig] | type[AlertSettingsIn],
    data: dict[str, Any],
    settings: Settings | None,
    *,
    cross_field: bool = True,
) -> tuple[Any, dict[str, list[str]]]:
    """(the model, {}) or (None, every bad field's messages).

    pydantic skips the model's cross-field rules once a field fails, so they
    are run here on the fields that did not: a body missing both ``name`` and
    ``url`` hears about both.
    """
    try:
        return model.model_validate(data, context={"settings": settings}), {}
    except ValidationError as exc:
        details = pydantic_details(model, exc, cross_field=cross_field)
    if cross_field:
        valid = _valid_fields(model, data, failed=details.keys())
        for field, message in model.cross_field_errors(valid).items():
            details.setdefault(field, [message])
    return None, details


def _valid_fields(
    model: type[BaseModel], data: Mapping[str, Any], failed: Iterable[str]
) -> dict[str, Any]:
    """*data* over the defaults of *model*, less the fields that *failed*."""
    fields = model.model_fields
    values = {
        name: field.get_default(call_default_factory=True)
        for name, field in fields.items()
        if not field.is_required()
    }
    values.update((name, value) for name, value in data.items() if name in fields)
    for name in failed:
        values.pop(name, None)
    return values


def pydantic_details(
    model: type[BaseModel], exc: ValidationError, *, cross_field: bool = True
) -> dict[str, list[str]]:
    """Each bad field of *exc*, worded by its ``Rule`` (``schemas.requests``), once."""
    details: dict[str, list[str]] = {}
    for err in exc.errors():
        ctx_error = (err.get("ctx") or {}).get("error")
        if isinstance(ctx_error, _FieldErrors):
            if not cross_field:
                continue
            for field, message in ctx_error.errors.items():
                details.setdefault(field, []).append(message)
            continue
        field = str(err["loc"][0]) if err["loc"] else "body"
        message = "is required" if err["type"] == "missing" else error_message(model, err)
        messages = details.setdefault(field, [])
        if message not in messages:
            messages.append(message)
    return details
