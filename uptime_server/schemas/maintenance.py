"""Request and response models of maintenance windows (docs/maintenance.md).

A body gives the title, what the window covers (``monitor_ids`` and/or
``tags``, at least one) and at most one schedule: one-off (``starts_at`` and
``ends_at``), or recurring (``rrule`` or ``cron``, with ``duration`` and
``timezone``). A window with no schedule is opened by hand only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, Strict

from uptime_server.errors import validation_error
from uptime_server.maintenance.schedule import (
    Schedule,
    cron_error,
    is_open,
    next_start,
    open_until,
    rrule_error,
)
from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.field_rules import no_control, strip
from uptime_server.schemas.requests import Rule, check_fields, require_object
from uptime_server.schemas.tags import Tags

MAX_MONITOR_IDS = 500
MIN_DURATION = 60
MAX_DURATION = 31 * 86400
MAX_MANUAL = 31 * 86400
Time = Annotated[AwareDatetime, Strict(False), Rule("must be an ISO 8601 time with a zone")]
FIELDS = ("title", "monitor_ids", "tags", "starts_at", "ends_at", "rrule", "cron", "duration",
          "timezone")  # fmt: skip


class MaintenanceBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    title: Annotated[
        str,
        Field(min_length=1, max_length=200),
        BeforeValidator(strip),
        Rule("must be 1 to 200 characters", on=("string_too_short", "string_too_long")),
    ] = Field(description="1 to 200 characters.")
    monitor_ids: Annotated[
        list[Annotated[int, Field(gt=0)]],
        Field(max_length=MAX_MONITOR_IDS),
        Rule(f"must be a list of at most {MAX_MONITOR_IDS} monitor ids"),
    ] = Field(default_factory=list, description="Your monitors the window covers.")
    tags: Tags = Field(
        default_factory=list,
        description="Also covers your monitors carrying all of these tags (as GET /monitors?tag).",
    )
    starts_at: Time | None = Field(None, description="One-off: start (with ends_at).")
    ends_at: Time | None = Field(None, description="One-off: end, after starts_at.")
    rrule: Annotated[str, Field(min_length=1, max_length=1000)] | None = Field(
        None, description="Recurring: an RFC 5545 RRULE (DTSTART optional), in timezone."
    )
    cron: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        None, description="Recurring: a five-field cron expression, in timezone."
    )
    duration: Annotated[
        Annotated[int, Field(ge=MIN_DURATION, le=MAX_DURATION)] | None,
        Rule(f"must be {MIN_DURATION} to {MAX_DURATION} seconds"),
    ] = Field(None, description="Recurring: seconds each occurrence lasts.")
    timezone: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        "UTC", description="IANA zone of rrule and cron (DST through zoneinfo)."
    )

    def columns(self) -> dict[str, Any]:
        values = self.model_dump(include=set(FIELDS))
        for name in ("starts_at", "ends_at"):
            if values[name] is not None:
                values[name] = values[name].astimezone(UTC).replace(microsecond=0)
        return values


def _between_fields(
    body: MaintenanceBody, now: datetime, new_schedule: bool
) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    try:
        no_control(body.title, "title")
    except ValueError as exc:
        errors["title"] = [str(exc)]
    if not body.monitor_ids and not body.tags:
        errors["monitor_ids"] = ["give monitor_ids or tags (or both)"]
    one_off = body.starts_at is not None or body.ends_at is not None
    recurring = body.rrule is not None or body.cron is not None
    for name in ("starts_at", "ends_at"):
        value = getattr(body, name)
        if value is not None and not 1970 <= value.year <= 9000:
            # Before turning it into UTC: year 1 or 9999 with an offset overflows.
            errors[name] = ["must be a time between the years 1970 and 9000"]
    if errors:
        return errors
    if one_off and recurring:
        errors["starts_at"] = ["a window is one-off (starts_at, ends_at) or recurring, not both"]
    elif one_off:
        if body.starts_at is None or body.ends_at is None:
            errors["ends_at" if body.ends_at is None else "starts_at"] = [
                "a one-off window needs both starts_at and ends_at"
            ]
        elif body.ends_at <= body.starts_at:
            errors["ends_at"] = ["must be after starts_at"]
    if body.rrule is not None and body.cron is not None:
        errors["cron"] = ["give rrule or cron, not both"]
    if recurring and body.duration is None:
        errors["duration"] = ["a recurring window needs a duration in seconds"]
    if not recurring and body.duration is not None:
        errors["duration"] = ["only a recurring window (rrule or cron) has a duration"]
    zone = "UTC"
    try:
        ZoneInfo(body.timezone)
        zone = body.timezone
    except (ZoneInfoNotFoundError, ValueError):
        errors["timezone"] = ["must be an IANA time zone, e.g. Europe/Berlin"]
    if body.cron is not None:
        if not _fires(body.cron):
            errors["cron"] = ["must be a valid five-field cron expression, e.g. '0 2 * * 0'"]
        elif new_schedule and (problem := cron_error(body.cron, zone, now)):
            errors["cron"] = [problem]
    # An rrule kept as stored by an edit is only read again: its DTSTART may have aged.
    if body.rrule is not None and (problem := rrule_error(body.rrule, zone, now, new=new_schedule)):
        errors["rrule"] = [problem]
    return errors


def _fires(cron: str) -> bool:
    """A five-field expression that gives at least one date."""
    if len(cron.split()) != 5 or not croniter.is_valid(cron):
        return False
    try:
        croniter(cron, datetime(2000, 1, 1)).get_next(datetime)
    except Exception:  # "0 0 30 2 *": no such day
        return False
    return True


def parse_body(
    data: Any, current: dict[str, Any] | None = None, *, now: datetime
) -> MaintenanceBody:
    """A create body, or an edit's fields over *current* (omitted fields keep their values).

    A schedule given (on create, or rrule/cron in an edit) must open the
    window at least once in the next 10 years, never twice within an hour,
    and an RRULE's DTSTART must be at most a year old; one kept as stored by
    an edit is only parsed again.
    """
    given = require_object(data, "must be a JSON object with title and monitor_ids or tags")
    merged = {**(current or {}), **given}
    if current is not None and any(k in given for k in ("starts_at", "ends_at", "rrule", "cron")):
        # A new schedule replaces the old one whole.
        for name in ("starts_at", "ends_at", "rrule", "cron", "duration"):
            merged[name] = given.get(name)
    body, errors = check_fields(MaintenanceBody, merged)
    if body is not None:
        new_schedule = current is None or "rrule" in given or "cron" in given
        errors = _between_fields(body, now, new_schedule)
    if errors:
        raise validation_error(errors)
    assert body is not None
    return body


def current_fields(row: Any) -> dict[str, Any]:
    """A stored window as body fields (times as ISO strings), for an edit to merge into."""
    values = {name: getattr(row, name) for name in FIELDS}
    for name in ("starts_at", "ends_at"):
        if values[name] is not None:
            values[name] = values[name].isoformat()
    return values


class MaintenanceStart(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    duration: Annotated[
        Annotated[int, Field(ge=1, le=MAX_MANUAL)] | None,
        Rule(f"must be 1 to {MAX_MANUAL} seconds"),
    ] = Field(None, description="Seconds to stay open; omitted or null: until ended.")


class Maintenance(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    title: str
    monitor_ids: list[int]
    tags: list[str]
    starts_at: UtcTime | None
    ends_at: UtcTime | None
    rrule: str | None
    cron: str | None
    duration: int | None
    timezone: str
    active: Annotated[bool, Field(description="Open now")]
    active_until: Annotated[
        UtcTime | None,
        Field(
            description="When the open span closes; null: not open, or open until ended by hand"
        ),  # fmt: skip
    ]
    next_starts_at: Annotated[UtcTime | None, Field(description="The next span's start")]
    manual_start: Annotated[UtcTime | None, Field(description="Last opened by hand at")]
    manual_end: Annotated[UtcTime | None, Field(description="Opened by hand until")]
    ended_at: Annotated[UtcTime | None, Field(description="Last ended by hand at")]
    created_at: UtcTime
    updated_at: UtcTime

    @classmethod
    def of(cls, row: Any, now: datetime) -> Self:
        s = Schedule.of(row)
        return cls.from_row(
            row,
            active=is_open(s, now),
            active_until=open_until(s, now),
            next_starts_at=next_start(s, now),
        )


class MaintenanceList(ResponseModel):
    data: list[Maintenance]
