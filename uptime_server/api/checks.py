"""Check runs of a monitor: "test now" and history (docs/api.md#test-a-monitor, #history)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Blueprint, request

from uptime_server.auth.teams import current_acting
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.engine.probe_loop import ProbeLoop, shared_probe_loop
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.spec import check_spec, probe_config
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import PASSIVE_TYPES, Monitor
from uptime_server.schemas.base import data, data_of, json_response
from uptime_server.schemas.checks import CheckRecord, History, HistoryMeta, TestResult
from uptime_server.services import monitors as monitor_service
from uptime_server.wsgi.check_slots import RunSlots
from uptime_server.wsgi.context import now, settings, state
from uptime_server.wsgi.operations import TIME_QUERY, documenter, limit, query
from uptime_server.wsgi.query_params import int_param, time_param

bp = Blueprint("checks", __name__, url_prefix="/monitors")
doc = documenter("monitors")

HISTORY_WINDOW = timedelta(hours=24)
EARLIEST = datetime.min.replace(tzinfo=UTC)


def _probe_loop() -> ProbeLoop:
    # Tests and the daemon may plug in their own; otherwise one per process,
    # so the TLS contexts and HTTP session are shared by every request.
    loop = state().services.get("probe_loop")
    if loop is not None:
        return loop
    return shared_probe_loop(probe_config(settings()), settings().check_concurrency)


def run_test(monitor: Monitor) -> TestResult:
    """One check run now, recorded like any other (no lease: the schedule stays)."""
    if monitor.type in PASSIVE_TYPES:
        raise ApiError(
            "MONITOR_TYPE_NOT_SUPPORTED",
            f"Monitors of type {monitor.type} are not tested: the job they watch pings them",
        )
    if not monitor.checks_supported:
        raise ApiError(
            "MONITOR_TYPE_NOT_SUPPORTED",
            f"Monitors of type {monitor.type} are not checked in this version",
        )
    started = now()
    limit = settings().test_run_timeout
    job = _probe_loop().run_sync(check_spec(monitor), deadline=limit)
    if job.timed_out:
        # Cut short, the run says nothing about the target under its own
        # timeout and retries: nothing is recorded, the schedule goes on.
        raise ApiError(
            "TEST_RUN_TIMEOUT",
            f"The test run did not finish within {limit}s (UPTIME_TEST_RUN_TIMEOUT); "
            "nothing was recorded, and scheduled checks go on as usual",
        )
    if job.result is None:
        raise RuntimeError(f"test check of monitor {monitor.id} failed: {job.error!r}")
    result = job.result
    outcome = CheckOutcome.from_run(
        result,
        monitor_id=monitor.id,
        monitor_created_at=monitor.created_at,
        location=monitor.locations[0] if monitor.locations else settings().locations[0],
        checked_at=started,
    )
    [done] = Recorder(settings()).record([outcome], now=now())
    if done.run_status is None:
        # Deleted (or its id given to another monitor) while the check ran:
        # nothing was recorded; report it as gone.
        raise ApiError("MONITOR_NOT_FOUND", "Monitor not found")
    return TestResult(
        status=done.run_status,
        response_time=result.response_time,
        status_code=result.status_code,
        checked_at=started,
        error=result.error,
    )


def test_slots() -> RunSlots:
    """The app's cap on test runs under way (``check_slots``)."""
    return state().test_slots


@bp.post("/<int:monitor_id>/test")
@doc("testMonitor", ok=data(TestResult), errors=(404, 409, 504))
def test(monitor_id: int) -> Any:
    """Run one check now and record it."""
    monitor = monitor_service.get_owned(current_acting(), monitor_id)
    with test_slots().hold(current_acting().user_id):
        return data_of(run_test(monitor))


def _window(args: Any) -> tuple[datetime, datetime]:
    until = time_param(args, "to") or now()
    since = time_param(args, "from") or _day_before(until)
    if since > until:
        raise validation_error({"from": ["must not be after to"]})
    return since, until


def _day_before(until: datetime) -> datetime:
    # A `to` in the first day of year 1 has no day before it in datetime's range.
    if until - EARLIEST < HISTORY_WINDOW:
        return EARLIEST
    return until - HISTORY_WINDOW


@bp.get("/<int:monitor_id>/history")
@doc(
    "getMonitorHistory",
    ok=History,
    errors=(400, 404),
    params=(
        query("from", TIME_QUERY, "Default: 24 hours before `to`"),
        query("to", TIME_QUERY, "Default: now"),
        limit(100, 1000),
    ),
)
def history(monitor_id: int) -> Any:
    """Raw check runs, newest first."""
    monitor = monitor_service.get_owned(current_acting(), monitor_id)
    since, until = _window(request.args)
    size = int_param(request.args, "limit", 100, 1, 1000)
    rows = monitor_service.check_runs(monitor, since=since, until=until, limit=size + 1)
    meta = HistoryMeta(
        count=min(len(rows), size), limit=size, from_=since, to=until, has_more=len(rows) > size
    )
    return json_response(History(data=[CheckRecord.of(run) for run in rows[:size]], meta=meta))
