"""Response models of the monitors resource (docs/api.md#monitor-object)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from uptime_server.checks import quorum
from uptime_server.checks.outcomes import PING_KINDS
from uptime_server.clock import isoformat
from uptime_server.models import MONITOR_TYPES, STATUSES
from uptime_server.schemas.base import Pages, Percent, ResponseModel, UtcTime
from uptime_server.schemas.monitor_config import TYPE_DEFAULTS, type_defaults_missing

MonitorType = Literal[*MONITOR_TYPES]  # type: ignore[valid-type]
Status = Literal[*STATUSES]  # type: ignore[valid-type]
Seconds = Annotated[int, Field(description="Seconds")]
LastRunTime = Annotated[int | None, Field(description="Milliseconds, of the last run")]
BulkAction = Literal["pause", "resume", "delete", "update"]
TYPE_DEFAULTS_SHOWN = tuple(dict.fromkeys(n for fields in TYPE_DEFAULTS.values() for n in fields))


BLOCKED = (
    "A monitor it depends on, directly or through a chain, has an open downtime "
    "(docs/monitors.md#dependencies)."
)

PingKind = Literal[*PING_KINDS]  # type: ignore[valid-type]
MESSAGE_START = 200  # characters of a ping's message shown in the monitor and its history


class LastPing(ResponseModel):
    at: UtcTime
    kind: PingKind
    exit_code: int | None
    message: str | None = Field(description=f"The first {MESSAGE_START} characters.")
    source_ip: str | None
    user_agent: str | None

    @classmethod
    def of(cls, run: Any) -> Self:
        return cls(
            at=run.checked_at,
            kind=run.kind,
            exit_code=run.exit_code,
            message=message_start(run.message),
            source_ip=run.source_ip,
            user_agent=run.user_agent,
        )


def message_start(message: str | None) -> str | None:
    return None if message is None else message[:MESSAGE_START]


class LocationState(ResponseModel):
    location: str
    status: Annotated[
        Literal["online", "warning", "offline"] | None,
        Field(description="The status of its latest run; null: none yet."),
    ]
    checked_at: Annotated[UtcTime | None, Field(description="When that run was checked.")]
    stale: Annotated[
        bool,
        Field(
            description="Its latest run is older than 1.5 × check_interval (or it has "
            "none, and the open round is that old): left out when the monitor's status is "
            "next decided."
        ),
    ]


class Monitor(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    name: str
    url: str | None
    type: MonitorType
    method: str
    expected_status: list[int]
    timeout: Seconds
    check_interval: Seconds
    retry_count: int
    locations: list[str]
    follow_redirects: bool
    verify_ssl: bool
    headers: dict[str, str]
    body: str | None
    expected_content: str | None
    excluded_content: str | None
    json_path: str | None
    expected_json_value: str | None
    degraded_response_time: int | None
    tls: bool = Field(description="tcp: TLS handshake after connecting.")
    send: str | None = Field(description="tcp, udp: text sent, with escapes.")
    expect: str | None = Field(description="tcp, udp: text the reply must contain.")
    query_name: str | None = Field(description="dns.")
    record_type: str | None = Field(description="dns.")
    resolver: str | None = Field(description="dns: host[:port]; null = the system's.")
    expected_rcode: str | None = Field(description="dns: NOERROR unless set; null otherwise.")
    expected_values: list[str] | None = Field(description="dns.")
    count: int | None = Field(description="ping: echoes per check (3 unless set).")
    max_packet_loss: float | None = Field(description="ping: percent (0 unless set).")
    key: str | None = Field(description="The stable name `uptime apply` matches by.")
    tags: list[str] = Field(description="Sorted labels.")
    depends_on: list[int] = Field(
        description="Ids of the team's monitors this one depends on, ascending "
        "(docs/monitors.md#dependencies)."
    )
    period: int | None = Field(description="heartbeat: seconds between pings (or cron).")
    grace: int | None = Field(description="heartbeat: seconds a ping may be late.")
    cron: str | None = Field(description="heartbeat: cron expression of expected pings.")
    timezone: str | None = Field(description="heartbeat: IANA time zone of cron.")
    ping_url: str | None = Field(
        description="heartbeat: the URL the job pings (its token is the credential); "
        "null for other types, or when the token can no longer be shown (rotate it)."
    )
    next_deadline: UtcTime | None = Field(
        description="heartbeat: the expected time of the next ping plus grace; "
        "offline if no success ping comes by then."
    )
    last_ping: LastPing | None = Field(description="heartbeat: the latest ping, if any.")
    badges: bool
    badge_token: str | None = Field(
        description="While badges is true: the badge URLs' secret, rotated by "
        "POST /monitors/{id}/badge-token; null otherwise."
    )
    status: Status
    flapping: Annotated[bool, Field(description="Alerts held: it changes state too often.")]
    blocked: Annotated[bool, Field(description=BLOCKED)]
    blocked_by: list[int] = Field(
        description="The monitors it depends on, directly or through a chain, that have an "
        "open downtime, ascending; empty when it is not blocked."
    )
    checks_supported: bool
    paused: bool
    paused_at: UtcTime | None
    pause_reason: str | None
    uptime_24h: Percent | None
    uptime_7d: Percent | None
    uptime_30d: Percent | None
    response_time: LastRunTime
    status_code: int | None
    last_error: str | None
    last_check: UtcTime | None
    last_success: UtcTime | None
    last_failure: UtcTime | None
    cert_expires_at: UtcTime | None
    next_check_at: UtcTime | None
    created_at: UtcTime
    updated_at: UtcTime
    locations_status: list[LocationState] = Field(
        description="Each of `locations`, in order: its latest run and whether it is stale."
    )
    stale_locations: list[str] = Field(
        description="The locations left out of `status` as stale (docs/alerts.md#locations)."
    )

    @classmethod
    def of(
        cls,
        row: Any,
        *,
        uptime: Mapping[str, float | None],
        next_check_at: datetime | None,
        tags: list[str],
        depends_on: list[int],
        blocked: bool,
        blocked_by: list[int],
        locations_status: list[dict[str, Any]],
        ping_url: str | None = None,
        next_deadline: datetime | None = None,
        last_ping: Any = None,
    ) -> Self:
        """*row* with the figures and tags the monitor service loaded for it."""
        return cls.from_row(
            row,
            **type_defaults_missing(row.type, {n: getattr(row, n) for n in TYPE_DEFAULTS_SHOWN}),
            badge_token=row.badge_token if row.badges else None,
            uptime_24h=uptime["24h"],
            uptime_7d=uptime["7d"],
            uptime_30d=uptime["30d"],
            next_check_at=next_check_at,
            tags=tags,
            depends_on=depends_on,
            blocked=blocked,
            blocked_by=blocked_by,
            ping_url=ping_url,
            next_deadline=next_deadline,
            last_ping=None if last_ping is None else LastPing.of(last_ping),
            locations_status=locations_status,
            stale_locations=[s["location"] for s in locations_status if s["stale"]],
        )


class MonitorSummary(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    name: str
    url: str | None
    type: MonitorType
    status: Status
    flapping: bool
    blocked: Annotated[bool, Field(description=BLOCKED)]
    paused: bool
    uptime_24h: Percent | None
    response_time: LastRunTime
    status_code: int | None = Field(description="http, https: the last run's HTTP status.")
    last_check: UtcTime | None
    query_name: str | None = Field(description="dns.")
    record_type: str | None = Field(description="dns; null = A.")
    tags: list[str]


def summary_json(
    row: Mapping[str, Any], *, uptime_24h: float | None, tags: list[str], blocked: bool
) -> dict[str, Any]:
    """``MonitorSummary.from_row(row, uptime_24h=..., tags=..., blocked=...).to_json()``
    for a row
    as a dict of ``services.monitors.SUMMARY_COLUMNS``, without a model per row.

    A list page of 100 spent more building and dumping the models than in its
    queries (re-measured: bench/README.md#second-copies-re-measured-issue-30).
    The values come from the database through the model's fields, so they
    already have the types the model would check; the fields, their order and
    each value's wire form are the model's (tests/api/test_monitors_list.py
    compares the two).
    """
    return {
        "id": row["id"],
        "team_id": row["team"],
        "name": row["name"],
        "url": row["url"],
        "type": row["type"],
        "status": row["status"],
        "flapping": row["flapping_since"] is not None,
        "blocked": blocked,
        "paused": row["paused"],
        "uptime_24h": uptime_24h,
        "response_time": row["response_time"],
        "status_code": row["status_code"],
        "last_check": isoformat(row["last_check"]),
        "query_name": row["query_name"],
        "record_type": row["record_type"],
        "tags": tags,
    }


class MonitorCreated(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    name: str
    url: str | None
    type: MonitorType
    status: Status
    depends_on: list[int] = Field(description="Ids of the monitors it depends on, ascending.")
    created_at: UtcTime
    ping_url: str | None = Field(
        None, description="heartbeat: the URL the job pings (only heartbeat monitors have it)."
    )

    @model_serializer(mode="wrap")
    def _ping_url_of_heartbeats(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return drop_absent(handler(self), ("ping_url",))


def drop_absent(out: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """*out* without those of *keys* that are null: fields only some objects have."""
    for key in keys:
        if out.get(key) is None:
            out.pop(key, None)
    return out


class MonitorList(ResponseModel):
    data: list[MonitorSummary]
    pagination: Pages


class MonitorMessage(ResponseModel):
    message: str
    data: Monitor


class AlertSettings(ResponseModel):
    email_enabled: bool
    email_recipients: Annotated[list[str], Field(min_length=1)]
    slack_enabled: bool
    slack_webhook_url: str | None
    alert_on_recovery: bool
    alert_threshold: Annotated[int, Field(ge=1, le=100)]
    cert_expiry_days: Annotated[
        list[int], Field(description="Certificate-expiry thresholds in days, largest first")
    ]
    recovery_threshold: Annotated[int, Field(ge=1, le=100)]
    reminder_interval: Annotated[int | None, Field(description="Seconds; null: no reminders")]
    flap_threshold: Annotated[
        int | None, Field(ge=1, le=100, description="null: no flap detection")
    ]
    flap_window: Seconds
    channel_ids: list[int]
    min_failed_locations: Annotated[
        int | None,
        Field(ge=1, le=10, description="null: a majority of the monitor's locations"),
    ]
    effective_min_failed_locations: Annotated[
        int,
        Field(
            ge=1,
            le=10,
            description="Read-only: the quorum in force, min_failed_locations or the "
            "majority, capped at the monitor's number of locations.",
        ),
    ]

    @classmethod
    def of(cls, row: Any, team_emails: list[str], *, locations: int) -> Self:
        # No recipients stored means the team's members (member or above).
        return cls.from_row(
            row,
            email_recipients=row.email_recipients or team_emails,
            effective_min_failed_locations=quorum.min_failed(row.min_failed_locations, locations),
        )


class BulkError(ResponseModel):
    code: str
    message: str


class BulkFailure(ResponseModel):
    id: int
    error: BulkError


class BulkOutcome(ResponseModel):
    action: BulkAction
    succeeded: list[int]
    failed: list[BulkFailure]


class DependencyNode(ResponseModel):
    id: int
    name: str
    status: Status = Field(description="As shown in the monitor (maintenance included).")
    blocked: bool


class ParentNode(DependencyNode):
    repeated: bool = Field(
        description="Shown already elsewhere in this tree: its own parents are left out here."
    )
    parents: list[ParentNode] = Field(description="The monitors this one depends on.")


class ChildNode(DependencyNode):
    repeated: bool = Field(
        description="Shown already elsewhere in this tree: its own children are left out here."
    )
    children: list[ChildNode] = Field(description="The monitors that depend on this one.")


class Dependencies(ResponseModel):
    monitor: DependencyNode
    parents: list[ParentNode] = Field(description="Its whole chains up, ascending ids per level.")
    children: list[ChildNode] = Field(description="Its whole chains down, ascending ids per level.")
