"""Monitors as code: the body of ``POST /monitors/apply``, its plan, and entries.

An *entry* is one monitor as a file states it (docs/monitors-as-code.md): the
fields of a create body, and ``alerts`` with any of the alert settings. The
same shape comes out of ``GET /monitors/export``, holding only what differs
from the defaults, so exporting and applying round-trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from uptime_server.config import Settings
from uptime_server.schemas.base import ResponseModel
from uptime_server.schemas.monitor_config import TYPE_DEFAULTS, AlertSettingsIn, MonitorConfig
from uptime_server.schemas.requests import Rule

MAX_ENTRIES = 1000
# Shown first in an entry, in this order; the rest follow the model's order.
LEADING = ("key", "name", "type", "url")
ALWAYS = ("name", "type")


class ApplyRequest(BaseModel):
    """The whole desired set of the caller's monitors."""

    model_config = ConfigDict(extra="forbid", strict=True)

    monitors: Annotated[
        list[dict[str, Any]],
        Field(max_length=MAX_ENTRIES),
        Rule(f"must be a list of at most {MAX_ENTRIES} monitor objects"),
    ] = Field(
        description="Each a create body (see MonitorCreate) with an optional `alerts` object "
        "(see AlertSettingsUpdate). Matched to your monitors by key, else by name."
    )
    prune: bool = Field(False, description="Delete your monitors that no entry matches.")
    dry_run: bool = Field(False, description="Validate and plan; change nothing.")


Action = Literal["create", "update", "delete", "unchanged", "extra"]


class Change(ResponseModel):
    field: str = Field(description="A monitor field, or alerts.<setting>")
    old: Any = Field(description="null for a create")
    new: Any = Field(description="null for a delete")


class PlanStep(ResponseModel):
    action: Action = Field(
        description="extra: a monitor no entry matches, left alone without prune"
    )
    id: int | None = Field(description="The monitor's id; null for a create")
    key: str | None
    name: str
    entry: int | None = Field(description="Index of the entry in `monitors`; null for none")
    changes: list[Change]


class PlanCounts(ResponseModel):
    create: int
    update: int
    delete: int
    unchanged: int
    extra: int


class ApplyResult(ResponseModel):
    dry_run: bool
    applied: bool = Field(description="Whether anything was written")
    summary: PlanCounts
    plan: list[PlanStep]

    @classmethod
    def of(cls, steps: Iterable[Any], *, dry_run: bool, applied: bool) -> Self:
        """The result of planned *steps* (``monitor_apply.Step``), counted by action."""
        plan = [step.as_json() for step in steps]
        counts = dict.fromkeys(PlanCounts.model_fields, 0)
        for step in plan:
            counts[step["action"]] += 1
        return cls(dry_run=dry_run, applied=applied, summary=counts, plan=plan)


class Export(ResponseModel):
    monitors: list[dict[str, Any]] = Field(
        description="Entries as `POST /monitors/apply` takes them, only non-default fields"
    )


def monitor_defaults(settings: Settings) -> dict[str, Any]:
    """Each optional field of a monitor with the value it takes when omitted."""
    defaults = {
        name: field.get_default(call_default_factory=True)
        for name, field in MonitorConfig.model_fields.items()
        if not field.is_required()
    }
    defaults["locations"] = [settings.locations[0]]
    return defaults


def alert_defaults() -> dict[str, Any]:
    return AlertSettingsIn().model_dump()


def entry_of(
    config: Mapping[str, Any], alerts: Mapping[str, Any] | None, settings: Settings
) -> dict[str, Any]:
    """A monitor's configuration as an entry: name, type and what is not a default."""
    defaults = monitor_defaults(settings)
    defaults.update(TYPE_DEFAULTS.get(config.get("type"), {}))
    order = [*LEADING, *(n for n in MonitorConfig.model_fields if n not in LEADING)]
    entry = {
        name: config[name]
        for name in order
        if name in ALWAYS or (name in config and config[name] != defaults.get(name))
    }
    plain = alert_defaults()
    changed_alerts = {
        name: value for name, value in (alerts or {}).items() if value != plain.get(name)
    }
    if changed_alerts:
        entry["alerts"] = changed_alerts
    return entry
