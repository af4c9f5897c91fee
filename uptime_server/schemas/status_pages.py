"""Status pages: the configuration body, and the owner's and the public's views of a page.

The configuration (``StatusPageIn``) is what the owner sends; the public view
(``PublicPage``) is what ``/status/{slug}.json`` serves, and the HTML page
shows the same content. Rules: docs/status-pages.md.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Self

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from uptime_server.db import INT64_MAX
from uptime_server.schemas.base import Percent, ResponseModel, UtcTime
from uptime_server.schemas.field_rules import no_control, strip
from uptime_server.schemas.requests import Rule

SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
SLUG_RULE = "must be 1 to 64 lower-case letters, digits and inner hyphens, with at least one letter"
MAX_GROUPS = 20
MAX_GROUP_MONITORS = 200
MAX_TAGS = 20

MonitorId = Annotated[int, Field(ge=1, le=INT64_MAX)]
Heading = Annotated[str, BeforeValidator(strip), Field(min_length=1, max_length=200)]
Tag = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")]
Label = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]


def _within_int64(key: str) -> str:
    # 19 digits can still be above INT64_MAX, which no id can be (nor be bound in SQLite).
    if int(key) > INT64_MAX:
        raise ValueError(f"label keys must be monitor ids, 1 to {INT64_MAX}")
    return key


# A monitor id as JSON writes an object's key: ASCII digits, no leading zero
# (a label under "01" would never be found for monitor 1), at most INT64_MAX.
LabelKey = Annotated[str, Field(pattern=r"^[1-9][0-9]{0,18}$"), AfterValidator(_within_int64)]


class GroupIn(BaseModel):
    """One section of the page: a heading over the monitors chosen by id and by tag."""

    model_config = ConfigDict(extra="forbid", strict=True)

    heading: Heading
    monitor_ids: Annotated[list[MonitorId], Field(max_length=MAX_GROUP_MONITORS)] = Field(
        default_factory=list, description="The owner's monitors, in this order."
    )
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] = Field(
        default_factory=list,
        description="Also every monitor of the owner carrying one of these tags, after the ids.",
    )
    labels: dict[LabelKey, Label] = Field(
        default_factory=dict,
        description="Public names by monitor id (as a string: digits, no leading zero, at "
        "most 9223372036854775807); a monitor without one shows its own name only when the "
        "page's show_names is true.",
        json_schema_extra={"additionalProperties": False},  # a key is a monitor id, or refused
    )


class StatusPageIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    slug: Annotated[str, Field(pattern=SLUG_PATTERN), Rule(SLUG_RULE)] = Field(
        description="The page's address, /status/{slug}: unique on this server."
    )
    title: Annotated[
        str,
        BeforeValidator(strip),
        Field(min_length=1, max_length=200),
        Rule("must be 1 to 200 characters, without control characters"),
    ]
    description: Annotated[str, Field(max_length=2000)] = ""
    groups: Annotated[
        list[GroupIn],
        Field(max_length=MAX_GROUPS),
        Rule(
            f"must be a list of at most {MAX_GROUPS} groups, each {{heading, monitor_ids, tags,"
            f" labels}} with at most {MAX_GROUP_MONITORS} ids and {MAX_TAGS} tags, and labels"
            f" keyed by monitor id (1 to {INT64_MAX})"
        ),
    ] = Field(default_factory=list)
    show_urls: bool = Field(
        False,
        description="Show each monitor's URL on the public page: scheme, host and path only.",
    )
    show_names: bool = Field(
        False, description="Show monitors' own names where the group gives no label."
    )

    @field_validator("slug")
    @classmethod
    def _slug(cls, v: str) -> str:
        # All digits would read as a page id in /api/v1/status-pages/{id_or_slug}.
        if not re.search(r"[a-z]", v):
            raise ValueError(SLUG_RULE)
        return v

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return no_control(v, "title")

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        if "\x00" in v:
            raise ValueError("must not contain NUL")
        return v


class Group(ResponseModel):
    heading: str
    monitor_ids: list[int]
    tags: list[str]
    labels: dict[str, str]


class StatusPage(ResponseModel):
    """A page as its owner sees it."""

    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    slug: str
    title: str
    description: str
    groups: list[Group]
    show_urls: bool
    show_names: bool
    url: str = Field(description="The public page.")
    created_at: UtcTime
    updated_at: UtcTime

    @classmethod
    def of(cls, row: Any, base_url: str) -> Self:
        groups = [{"labels": {}, "tags": [], "monitor_ids": [], **g} for g in row.groups]
        return cls.from_row(row, groups=groups, url=f"{base_url.rstrip('/')}/status/{row.slug}")


class StatusPageList(ResponseModel):
    data: list[StatusPage]


class DayCell(ResponseModel):
    date: str = Field(description="YYYY-MM-DD (UTC)")
    uptime: Percent | None = Field(description="null: no checks that day")


class PublicMonitor(ResponseModel):
    name: str
    url: str | None = Field(
        None, description="Only when the page shows URLs: scheme, host and path, nothing else."
    )
    status: str = Field(
        description="online, offline, warning, pending, paused, or another monitor status"
    )
    status_text: str
    uptime_30d: Percent | None
    days: list[DayCell] = Field(description="90 days, oldest first, today last.")


class PublicGroup(ResponseModel):
    heading: str
    monitors: list[PublicMonitor]


class PublicIncident(ResponseModel):
    monitor: str = Field(description="The monitor's public name on this page")
    started_at: UtcTime
    resolved_at: UtcTime | None
    duration: int | None = Field(description="Seconds; null while open")


class PublicIncidents(ResponseModel):
    open: list[PublicIncident]
    past: list[PublicIncident] = Field(description="Resolved in the last 14 days, newest first.")


class PublicPage(ResponseModel):
    """What /status/{slug} shows, as JSON."""

    slug: str
    title: str
    description: str
    status: str = Field(
        description="operational, partial_outage, major_outage or maintenance (overall)"
    )
    status_text: str
    generated_at: UtcTime
    groups: list[PublicGroup]
    incidents: PublicIncidents
