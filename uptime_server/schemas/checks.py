"""Response models of check runs and statistics (docs/api.md#test-a-monitor, #history,
#statistics-object)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from uptime_server.schemas.base import Count, Percent, ResponseModel, UtcTime
from uptime_server.schemas.monitors import MESSAGE_START, PingKind, drop_absent, message_start
from uptime_server.stats.figures import GRANULARITIES, PERIODS

RunStatus = Literal["online", "warning", "offline"]
# A heartbeat's start and log pings are history entries under the monitor's
# status at the time, which may still be pending.
EntryStatus = Literal["online", "warning", "offline", "pending"]


class TestResult(ResponseModel):
    __test__ = False  # not a pytest test class, whatever its name

    status: RunStatus
    response_time: int | None
    status_code: int | None
    checked_at: UtcTime
    error: str | None


class CheckRecord(ResponseModel):
    id: int
    checked_at: UtcTime
    status: EntryStatus
    response_time: int | None
    status_code: int | None
    error: str | None
    location: str
    attempts: Annotated[int, Field(ge=1)]
    quorum_status: EntryStatus | None = Field(
        None,
        description="The monitor's status after this run: the quorum of its locations when "
        "the run closed a round, else the status it kept (docs/alerts.md#locations). Absent "
        "from runs recorded before it existed.",
    )
    kind: PingKind | None = Field(
        None, description="heartbeat: the ping's kind (success, start, fail, exit, log)."
    )
    exit_code: int | None = Field(None, description="heartbeat: the exit code pinged.")
    message: str | None = Field(
        None, description=f"heartbeat: the first {MESSAGE_START} characters of the ping's body."
    )
    source_ip: str | None = Field(None, description="heartbeat: the ping's source address.")
    user_agent: str | None = Field(None, description="heartbeat: the ping's user agent.")
    counted: bool = Field(
        True,
        description=(
            "false: the run failed while its probe agent's connectivity canary failed; "
            "kept as history, counted in no status, alert or uptime figure (docs/agents.md). "
            "Present only when false."
        ),
    )

    @classmethod
    def of(cls, run: Any) -> CheckRecord:
        return cls.from_row(run, message=message_start(run.message))

    @model_serializer(mode="wrap")
    def _ping_fields_of_pings(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A check's record keeps the shape it always had; a ping's has these.
        # Runs recorded before migration 0013 have no quorum_status; ``counted``
        # appears only on the rare uncounted run (docs/agents.md).
        out = drop_absent(
            handler(self), ("quorum_status",) if self.kind else ("quorum_status", *_PING_FIELDS)
        )
        if self.counted:
            out.pop("counted", None)
        return out


_PING_FIELDS = ("kind", "exit_code", "message", "source_ip", "user_agent")


class HistoryMeta(ResponseModel):
    count: int
    limit: int
    from_: Annotated[UtcTime, Field(alias="from")]
    to: UtcTime
    has_more: bool


class History(ResponseModel):
    data: list[CheckRecord]
    meta: HistoryMeta


class UptimeWindows(ResponseModel):
    day: Annotated[Percent | None, Field(alias="24h")]
    week: Annotated[Percent | None, Field(alias="7d")]
    month: Annotated[Percent | None, Field(alias="30d")]


class ResponseTimes(ResponseModel):
    avg: int | None
    min: int | None
    max: int | None
    p95: int | None


class Incidents(ResponseModel):
    count: int
    total_downtime: int
    blocked_downtime: Annotated[
        int,
        Field(
            description="Seconds of it in suppressed notifications (a blocked monitor's,"
            " docs/alerts.md#dependencies); included in total_downtime"
        ),
    ]


class CheckCounts(ResponseModel):
    total: int
    successful: int
    failed: int


class SeriesPoint(ResponseModel):
    start: UtcTime
    checks: int
    failed: int
    uptime: Percent | None
    avg_response_time: int | None
    p95_response_time: int | None


class Statistics(ResponseModel):
    period: Literal[*PERIODS]  # type: ignore[valid-type]
    granularity: Literal[*GRANULARITIES]  # type: ignore[valid-type]
    uptime: UptimeWindows
    response_times: ResponseTimes
    incidents: Incidents
    checks: CheckCounts
    maintenance_seconds: Annotated[
        Count,
        Field(
            description="Seconds of the period in a maintenance window: neither up nor down, "
            "its runs left out of uptime and checks"
        ),
    ]
    series: list[SeriesPoint]
