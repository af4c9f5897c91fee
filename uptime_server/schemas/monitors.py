"""Response models of the monitors resource (docs/api.md#monitor-object)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import Field

from uptime_server.models import MONITOR_TYPES, STATUSES
from uptime_server.schemas.base import Pages, Percent, ResponseModel, UtcTime

MonitorType = Literal[*MONITOR_TYPES]  # type: ignore[valid-type]
Status = Literal[*STATUSES]  # type: ignore[valid-type]
Seconds = Annotated[int, Field(description="Seconds")]
LastRunTime = Annotated[int | None, Field(description="Milliseconds, of the last run")]
BulkAction = Literal["pause", "resume", "delete", "update"]


class Monitor(ResponseModel):
    id: int
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
    expected_rcode: str | None = Field(description="dns.")
    expected_values: list[str] | None = Field(description="dns.")
    count: int | None = Field(description="ping: echoes per check.")
    max_packet_loss: float | None = Field(description="ping: percent.")
    badges: bool
    badge_token: str | None = Field(
        description="While badges is true: the badge URLs' secret, rotated by "
        "POST /monitors/{id}/badge-token; null otherwise."
    )
    status: Status
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

    @classmethod
    def of(
        cls, row: Any, *, uptime: Mapping[str, float | None], next_check_at: datetime | None
    ) -> Self:
        """*row* with the figures the monitor service loaded for it."""
        return cls.from_row(
            row,
            badge_token=row.badge_token if row.badges else None,
            uptime_24h=uptime["24h"],
            uptime_7d=uptime["7d"],
            uptime_30d=uptime["30d"],
            next_check_at=next_check_at,
        )


class MonitorSummary(ResponseModel):
    id: int
    name: str
    url: str | None
    type: MonitorType
    status: Status
    paused: bool
    uptime_24h: Percent | None
    response_time: LastRunTime
    last_check: UtcTime | None


class MonitorCreated(ResponseModel):
    id: int
    name: str
    url: str | None
    type: MonitorType
    status: Status
    created_at: UtcTime


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

    @classmethod
    def of(cls, row: Any, owner_email: str) -> Self:
        # No recipients stored means the monitor owner's address.
        return cls.from_row(row, email_recipients=row.email_recipients or [owner_email])


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
