"""Request bodies of the monitors resource besides the monitor itself: pause and bulk.

The monitor's own configuration and its alert settings are validated by
``uptime_server.schemas.monitor_config`` (``MonitorConfig``, ``AlertSettingsIn``); a bulk
update's ``settings`` are judged by it too, field by field.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from uptime_server.config import Settings
from uptime_server.db import INT64_MAX
from uptime_server.errors import ApiError, validation_error
from uptime_server.schemas.monitor_config import check_patch_fields
from uptime_server.schemas.monitors import BulkAction
from uptime_server.schemas.requests import Rule, check_fields, parse_body, require_object
from uptime_server.schemas.tags import MAX_TAGS, TAG_PATTERN, TAG_RULE, normalise_tags

# PostgreSQL text cannot hold NUL, so it is refused on every database.
Reason = Annotated[
    Annotated[str, Field(max_length=500, pattern=r"^[^\x00]*$")] | None,
    Rule("must be a string of at most 500 characters, without NUL"),
]
MonitorId = Annotated[int, Field(ge=1, le=INT64_MAX)]


class PauseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: Reason = None


def _tag_list(value: Any) -> Any:
    """A tag or a list of tags → the folded list (others are left to the type check)."""
    if isinstance(value, str):
        value = [value]
    return normalise_tags(value)


class BulkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    action: Annotated[BulkAction, Rule("must be one of pause, resume, delete, update")]
    # Exactly one of monitor_ids and tag selects the monitors (parse_bulk).
    monitor_ids: Annotated[
        list[MonitorId] | None,
        Field(min_length=1, max_length=100),
        Rule("must be a list of 1 to 100 positive integer ids"),
    ] = Field(None, description="The monitors acted on; or give tag instead.")
    tag: Annotated[
        Annotated[
            list[Annotated[str, Field(pattern=TAG_PATTERN)]],
            Field(min_length=1, max_length=MAX_TAGS),
        ]
        | None,
        BeforeValidator(_tag_list),
        Rule(f"must be a tag, or a list of 1 to {MAX_TAGS} tags; {TAG_RULE}"),
    ] = Field(
        None,
        description="Instead of monitor_ids: every one of your monitors carrying this tag "
        "(a string) or all of these tags (a list).",
    )
    reason: Reason = None
    # Judged with the action (parse_bulk), so its schema is the monitor update's.
    settings: Annotated[
        Any,
        WithJsonSchema(
            {
                "anyOf": [{"$ref": "#/components/schemas/MonitorUpdate"}, {"type": "null"}],
                "description": "Required for, and only accepted with, action update.",
            }
        ),
    ] = None


def parse_pause(data: Any) -> str | None:
    """The reason of a pause body (an empty reason is none)."""
    return parse_body(PauseRequest, data).reason or None


def parse_bulk(data: Any, settings: Settings) -> BulkRequest:
    """A bulk body, or one VALIDATION_ERROR naming every bad field, settings' included."""
    body = require_object(data)
    request, details = check_fields(BulkRequest, body)
    if (body.get("monitor_ids") is None) == (body.get("tag") is None):
        details.setdefault("monitor_ids", []).append("give exactly one of monitor_ids and tag")
    action, patch = body.get("action"), body.get("settings")
    if action == "update" and not isinstance(patch, dict):
        details["settings"] = ["is required for update and must be an object"]
    elif action != "update" and patch is not None:
        details["settings"] = ["is only accepted with action update"]
    elif action == "update":
        try:
            check_patch_fields(patch, settings)
        except ApiError as exc:
            details.update({f"settings.{k}": v for k, v in exc.details.items()})
            if exc.code != "VALIDATION_ERROR":
                raise ApiError(exc.code, exc.message, details) from None
    if details or request is None:
        raise validation_error(details)
    return request
