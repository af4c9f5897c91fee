"""Response models of check runs and statistics (docs/api.md#test-a-monitor, #history,
#statistics-object)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from uptime_server.schemas.base import Percent, ResponseModel, UtcTime
from uptime_server.stats.figures import GRANULARITIES, PERIODS

RunStatus = Literal["online", "warning", "offline"]


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
    status: RunStatus
    response_time: int | None
    status_code: int | None
    error: str | None
    location: str
    attempts: Annotated[int, Field(ge=1)]


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
    series: list[SeriesPoint]
