"""Request bodies → typed values, or a VALIDATION_ERROR.

Bodies are validated by pydantic models in strict mode (``"30"`` is not an
integer) with unknown fields refused by name. The update of a monitor merges
the change into the stored configuration and validates the result as a whole,
so a monitor can never be saved half-valid. One answer names every bad field
of a body, the rules between fields included (``_validate``). Rules and
defaults: docs/api.md#monitor-fields.
Query-string parameters are parsed by ``uptime_server.query_params``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from uptime_server.config import Settings
from uptime_server.email_syntax import normalize_email
from uptime_server.engine.json_path import MAX_LENGTH as JSON_PATH_MAX_LENGTH
from uptime_server.engine.json_path import validate_json_path
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import DEFAULT_EXPECTED_STATUS, MONITOR_TYPES
from uptime_server.net import guard

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
MAX_URL = 2048
MAX_MONITOR_BODY = 64 * 1024
# The check frames its own request: a monitor's header could contradict the
# body length or the target (request smuggling, a second Host) or break the
# connection handling.
FRAMING_HEADERS = ("Host", "Content-Length", "Transfer-Encoding", "Connection")
# Case-insensitive match for the OpenAPI document (ECMA regexes have no (?i)).
_METHOD_PATTERN = "^({})$".format(
    "|".join("".join(f"[{ch}{ch.lower()}]" for ch in method) for method in METHODS)
)


def _no_control(value: str, field: str) -> str:
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise ValueError(f"{field} must not contain control characters")
    return value


def no_nul(value: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL, so SQLite must refuse it too.
    if value is not None and "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def check_http_url(value: str, *, require_https: bool = False) -> str:
    if len(value) > MAX_URL:
        raise ValueError(f"must be at most {MAX_URL} characters")
    if value != value.strip() or any(ch.isspace() for ch in value):
        raise ValueError("must not contain whitespace")
    _no_control(value, "url")
    try:
        parts = urlsplit(value)
        _ = parts.port  # reading it raises ValueError on a bad port
    except ValueError:
        raise ValueError("is not a valid URL") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("must be an absolute http or https URL")
    if not parts.hostname:
        raise ValueError("must have a host")
    if require_https and parts.scheme != "https":
        raise ValueError("must use https for a monitor of type https")
    return value


def check_target_literal(url: str, *, block_private: bool) -> None:
    """Refuse, up front, an IP-literal host the SSRF guard would refuse at run time.

    The verdict is the guard's own (docs/api.md#outbound-safety). Host names
    pass: only what DNS answers when the check runs can be judged.
    """
    if not _guard_allows(url, block_private=False):
        raise ValueError(
            "has an IP address checks may never connect to "
            "(link-local such as cloud metadata, unspecified, multicast or reserved)"
        )
    if block_private and not _guard_allows(url, block_private=True):
        raise ValueError(
            "has a private, loopback or other non-public IP address, "
            "which this server refuses (UPTIME_BLOCK_PRIVATE_TARGETS)"
        )


def _guard_allows(url: str, *, block_private: bool) -> bool:
    try:
        guard.check_url(url, block_private=block_private)
    except guard.TargetNotAllowed:
        return False
    except ValueError:
        raise ValueError("is not a valid URL") from None
    return True


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
    name: str = Field(
        description="1 to 200 characters after stripping; no control characters.",
        json_schema_extra={"minLength": 1, "maxLength": 200},
    )
    type: Literal["http", "https", "tcp", "ping", "dns"] = Field(
        description="http and https are checked; tcp, ping and dns are stored but not checked."
    )
    url: str | None = Field(
        None,
        description="Absolute http(s) URL with a host; required for http and https, "
        "and https for type https.",
        json_schema_extra={"maxLength": MAX_URL},
    )
    method: str = Field(
        "GET",
        description="Case-insensitive in, upper-case out.",
        json_schema_extra={"pattern": _METHOD_PATTERN},
    )
    expected_status: list[int] = Field(
        default_factory=lambda: list(DEFAULT_EXPECTED_STATUS),
        json_schema_extra={
            "minItems": 1,
            "maxItems": 50,
            "items": {"type": "integer", "minimum": 100, "maximum": 599},
        },
    )
    timeout: int = Field(30, ge=5, le=300, description="Seconds; at most check_interval.")
    check_interval: int = Field(
        60,
        description="Seconds; the lower bound is UPTIME_MIN_CHECK_INTERVAL.",
        json_schema_extra={"maximum": 86400},
    )
    retry_count: int = Field(0, ge=0, le=10)
    locations: list[str] | None = Field(
        None,
        description="Locations known to the server (UPTIME_LOCATIONS); default its first.",
        json_schema_extra={"minItems": 1, "maxItems": 10},
    )
    follow_redirects: bool = True
    verify_ssl: bool = True
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Up to 50 request headers; names are RFC 7230 tokens, no CR/LF in values; "
        "Host, Content-Length, Transfer-Encoding and Connection are set by the check itself.",
        json_schema_extra={
            "maxProperties": 50,
            "propertyNames": {"pattern": _TOKEN.pattern},
            "additionalProperties": {
                "type": "string",
                "maxLength": 8192,
                "pattern": "^[^\\r\\n\\u0000]*$",
            },
        },
    )
    body: str | None = Field(
        None,
        description="Request body sent by the check; at most 64 KiB of UTF-8.",
        json_schema_extra={"maxLength": MAX_MONITOR_BODY},
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

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = v.strip()
        if not 1 <= len(v) <= 200:
            raise ValueError("must be 1 to 200 characters")
        return _no_control(v, "name")

    @field_validator("method")
    @classmethod
    def _method(cls, v: str) -> str:
        upper = v.upper()
        if upper not in METHODS:
            raise ValueError(f"must be one of {', '.join(METHODS)}")
        return upper

    @field_validator("expected_status")
    @classmethod
    def _statuses(cls, v: list[int]) -> list[int]:
        if not 1 <= len(v) <= 50:
            raise ValueError("must list 1 to 50 status codes")
        if any(not 100 <= code <= 599 for code in v):
            raise ValueError("each status code must be between 100 and 599")
        return list(dict.fromkeys(v))

    @field_validator("check_interval")
    @classmethod
    def _interval(cls, v: int, info: ValidationInfo) -> int:
        low = _settings(info).min_check_interval
        if not low <= v <= 86400:
            raise ValueError(f"must be between {low} and 86400 seconds")
        return v

    @field_validator("locations")
    @classmethod
    def _locations(cls, v: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if v is None:
            return None
        known = _settings(info).locations
        v = list(dict.fromkeys(v))
        if not 1 <= len(v) <= 10:
            raise ValueError("must list 1 to 10 locations")
        unknown = [loc for loc in v if loc not in known]
        if unknown:
            raise ValueError(f"unknown location(s) {', '.join(unknown)}; known: {', '.join(known)}")
        return v

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str]) -> dict[str, str]:
        if len(v) > 50:
            raise ValueError("at most 50 headers")
        for key, value in v.items():
            if not _TOKEN.match(key):
                raise ValueError(f"header name {key[:40]!r} is not a valid token")
            if any(ch in value for ch in "\r\n\0") or len(value) > 8192:
                raise ValueError(f"header {key} has CR, LF or NUL, or is over 8192 characters")
        framing = {name.lower() for name in FRAMING_HEADERS}
        refused = [key for key in v if key.lower() in framing]
        if refused:
            raise ValueError(
                f"must not set {', '.join(refused)}: the check sets "
                f"{', '.join(FRAMING_HEADERS)} itself"
            )
        return v

    @field_validator("body")
    @classmethod
    def _body(cls, v: str | None) -> str | None:
        if v is not None and len(v.encode()) > MAX_MONITOR_BODY:
            raise ValueError("must be at most 64 KiB")
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
        if _given(v, "type", "url") and v["type"] in ("http", "https") and not v["url"]:
            errors["url"] = "is required for http and https monitors"
        if _given(v, "timeout", "check_interval") and v["timeout"] > v["check_interval"]:
            errors["timeout"] = "must not exceed check_interval"
        json_value = _given(v, "expected_json_value", "json_path") and v["expected_json_value"]
        if json_value and not v["json_path"]:
            errors["expected_json_value"] = "requires json_path"
        return errors


class AlertSettingsIn(_JudgedWhole):
    """Alert settings of one monitor, as stored (docs/api.md#alert-settings)."""

    email_enabled: bool = True
    email_recipients: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Up to 20 addresses; an empty list means the monitor owner's address. "
        "Only the syntax is checked: root@localhost or ops@host.local are fine.",
        json_schema_extra={"items": {"type": "string", "format": "email", "maxLength": 254}},
    )
    slack_enabled: bool = False
    slack_webhook_url: str | None = Field(
        None,
        description="https URL; required when slack_enabled is true.",
        json_schema_extra={"maxLength": MAX_URL, "pattern": "^https://"},
    )
    alert_on_recovery: bool = True
    alert_threshold: int = Field(
        1, ge=1, le=100, description="Consecutive failed runs before a downtime notification."
    )

    @field_validator("email_recipients")
    @classmethod
    def _recipients(cls, v: list[str]) -> list[str]:
        addresses: list[str] = []
        bad: list[str] = []
        for address in v:
            try:
                addresses.append(normalize_email(address))
            except ValueError as exc:
                bad.append(f"{address[:100]!r} {exc}")
        if bad:
            raise ValueError("; ".join(bad))
        return list(dict.fromkeys(addresses))

    @field_validator("slack_webhook_url")
    @classmethod
    def _webhook(cls, v: str | None) -> str | None:
        if not v:
            return None
        return check_http_url(v, require_https=True)

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
    return _monitor_or_error(_require_object(data), settings)


def parse_monitor_update(
    current: Mapping[str, Any], patch: Any, settings: Settings
) -> MonitorConfig:
    """Validate *patch* merged into the *current* configuration, as a whole."""
    return _monitor_or_error({**current, **_require_object(patch)}, settings)


def check_patch_fields(patch: Mapping[str, Any], settings: Settings) -> None:
    """Validate each field of a partial change on its own (types, bounds, names).

    Cross-field rules need the monitor the change applies to, so they are
    left to ``parse_monitor_update``; this catches what is wrong everywhere.
    """
    template = {"name": "template", "type": "http", "url": "http://template.invalid/"}
    _, details = _validate(MonitorConfig, {**template, **patch}, settings, cross_field=False)
    if details:
        raise _monitor_error(details, patch)


def parse_alert_settings(current: Mapping[str, Any], patch: Any) -> AlertSettingsIn:
    alerts, details = _validate(AlertSettingsIn, {**current, **_require_object(patch)}, None)
    if details:
        raise validation_error(details)
    return alerts


def _require_object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise validation_error(
            {"body": ["must be a JSON object"]}, "Request body must be a JSON object"
        )
    return data


def _monitor_or_error(body: dict[str, Any], settings: Settings) -> MonitorConfig:
    cfg, details = _validate(MonitorConfig, body, settings)
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
        details = pydantic_details(exc, cross_field=cross_field)
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


def pydantic_details(exc: ValidationError, *, cross_field: bool = True) -> dict[str, list[str]]:
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
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "missing":
            message = "is required"
        else:
            message = err["msg"].removeprefix("Value error, ")
        details.setdefault(field, []).append(message)
    return details
