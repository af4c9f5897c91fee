"""Response models of the notifications resource (docs/api.md#notification-object)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Field

from uptime_server.models import NOTIFICATION_TYPES
from uptime_server.schemas.base import PageCounts, Pages, ResponseModel, UserRef, UtcTime

NotificationType = Literal[*NOTIFICATION_TYPES]  # type: ignore[valid-type]


class ErrorDetails(ResponseModel):
    status_code: int | None
    response_time: int | None
    error_message: str


class Notification(ResponseModel):
    id: int
    team_id: Annotated[int, Field(description="The team that owns it")]
    monitor_id: int
    monitor_name: str
    monitor_url: str | None
    type: NotificationType
    message: str
    status: Literal["active", "resolved"]
    started_at: UtcTime
    resolved_at: UtcTime | None
    duration: Annotated[int | None, Field(description="Seconds; null while active")]
    notification_method: Literal["email"]
    acknowledged: bool
    acknowledged_at: UtcTime | None
    acknowledged_by: Annotated[
        UserRef | None, Field(description="Who acknowledged it; null: nobody (or deleted since)")
    ]
    resolved_by: Annotated[
        UserRef | None,
        Field(description="Who resolved it by hand; null: a check run, a pause, or nobody yet"),
    ]
    email_sent_at: Annotated[
        UtcTime | None, Field(description="null until an email was handed over")
    ]
    error_details: ErrorDetails
    suppressed_by: Annotated[
        int | None,
        Field(
            description="The open downtime notification of the ancestor that blocked this"
            " monitor: no alert was sent (docs/alerts.md#dependencies); null otherwise"
        ),
    ]

    @classmethod
    def of(cls, row: Any) -> Self:
        """*row* read with its monitor and acting users joined (no query here).

        Read as ``services.notifications`` reads it: ``acker`` and ``resolver``
        are the users joined for ``acknowledged_by`` and ``resolved_by``.
        """
        acker, resolver = getattr(row, "acker", None), getattr(row, "resolver", None)
        return cls.from_row(
            row,
            monitor_name=row.monitor.name,
            monitor_url=row.monitor.url,
            acknowledged_by=_user(acker),
            resolved_by=_user(resolver),
            notification_method="email",
            error_details=ErrorDetails(
                status_code=row.error_status_code,
                response_time=row.error_response_time,
                error_message=row.error_message or "",
            ),
        )


def _user(row: Any) -> UserRef | None:
    """A user joined with a LEFT JOIN (an id of None: no one)."""
    return None if row is None else UserRef.maybe(row.id, row.name)


class Delivery(ResponseModel):
    """One message of a notification to one channel (docs/channels.md#delivery)."""

    channel_id: Annotated[
        int | None, Field(description="null for the monitor's implicit email/Slack channel")
    ]
    channel_name: Annotated[str | None, Field(description="null when implicit, or deleted")]
    channel_type: str
    event: Annotated[str, Field(description="alert, or acknowledge (PagerDuty)")]
    status: Literal["pending", "sent", "failed"]
    attempts: int
    last_error: str | None
    next_attempt_at: Annotated[UtcTime | None, Field(description="null once sent or failed")]
    sent_at: UtcTime | None

    @classmethod
    def of(cls, row: Any, channel_name: str | None) -> Self:
        pending = row.status == "pending"
        return cls.from_row(
            row,
            channel_name=channel_name,
            channel_type=row.channel,
            next_attempt_at=row.next_attempt_at if pending else None,
        )


class NotificationDetail(Notification):
    deliveries: Annotated[
        list[Delivery], Field(description="Each channel's delivery status, oldest first")
    ]


class ActiveMeta(ResponseModel):
    count: int
    timestamp: UtcTime


class ActiveNotifications(ResponseModel):
    data: list[Notification]
    meta: ActiveMeta


class RecentPages(PageCounts):
    has_next: bool


class RecentNotifications(ResponseModel):
    data: list[Notification]
    pagination: RecentPages


class NotificationPages(Pages):
    has_next: bool
    has_prev: bool


class NotificationList(ResponseModel):
    data: list[Notification]
    pagination: NotificationPages


class AcknowledgedData(ResponseModel):
    id: int
    acknowledged: Literal[True]
    acknowledged_at: UtcTime


class Acknowledged(ResponseModel):
    message: str
    data: AcknowledgedData

    @classmethod
    def of(cls, n: Any) -> Self:
        data = AcknowledgedData(id=n.id, acknowledged=True, acknowledged_at=n.acknowledged_at)
        return cls(message="Notification acknowledged", data=data)


class ResolvedData(ResponseModel):
    id: int
    status: Literal["resolved"]
    resolved_at: UtcTime


class Resolved(ResponseModel):
    message: str
    data: ResolvedData

    @classmethod
    def of(cls, n: Any) -> Self:
        data = ResolvedData(id=n.id, status="resolved", resolved_at=n.resolved_at)
        return cls(message="Notification resolved", data=data)
