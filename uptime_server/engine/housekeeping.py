"""Periodic housekeeping jobs (purges, retention), driven by the ``schedule`` package.

Only process-wide periodic jobs live here, never one job per monitor: checks
are scheduled by their persisted due times (``dispatcher``). Each part of the
daemon that needs a periodic job registers it with ``register(name,
every_seconds, fn)``; ``fn(now)`` receives the time ``loop(now)`` was given. A
job that raises is logged and runs again at its next period; it never stops the
others. Add default jobs in ``default_housekeeping``.

Clock. ``schedule`` reads the wall clock itself (``datetime.datetime.now()`` in
``Job.should_run``, ``Job.run`` and ``Job._schedule_next_run``). ``ClockScheduler``
and ``ClockJob`` replace exactly those readings with the time of the current
``loop(now)`` (the injected clock's, between loops), so what is due is decided by
the caller's clock and tests move time with a ``ManualClock``. After a stall a
job runs once and its next run is one period from then: missed runs are skipped,
not replayed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import schedule

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database, write_tx
from uptime_server.db.outages import OUTAGES, unavailable
from uptime_server.models import AuditEvent, CliTicket, OAuthState, Session
from uptime_server.stats import retention

log = logging.getLogger(__name__)

MAX_SLEEP = 60.0

Job = Callable[[datetime], object]


class ClockJob(schedule.Job):
    """A ``schedule.Job`` that asks its ``ClockScheduler`` for the time.

    Only plain periods (``every(n).seconds`` ... ``.weeks``) are supported: the
    calendar forms (``at``, weekdays, ``to``, ``until``) need the local wall
    clock, which housekeeping has no use for.
    """

    scheduler: ClockScheduler

    @property
    def should_run(self) -> bool:
        return self.next_run is not None and self.scheduler.now() >= self.next_run

    def run(self) -> object:
        ret = self.job_func()
        self.last_run = self.scheduler.now()
        self._schedule_next_run()
        return ret

    def _schedule_next_run(self) -> None:
        calendar = (self.at_time, self.start_day, self.latest, self.cancel_after)
        if self.unit not in ("seconds", "minutes", "hours", "days", "weeks") or any(
            part is not None for part in calendar
        ):
            raise schedule.ScheduleValueError("housekeeping jobs run every fixed period only")
        self.next_run = self.scheduler.now() + timedelta(**{self.unit: self.interval})


class ClockScheduler(schedule.Scheduler):
    """A ``schedule.Scheduler`` whose "now" is the loop's, else the clock's."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self._now: datetime | None = None

    def now(self) -> datetime:
        return self._now if self._now is not None else self.clock.now()

    @contextmanager
    def at(self, now: datetime) -> Iterator[None]:
        """Within the block, jobs are due, run and rescheduled as of *now*."""
        self._now = now
        try:
            yield
        finally:
            self._now = None

    def every(self, interval: int = 1) -> ClockJob:
        return ClockJob(interval, self)

    @property
    def idle_seconds(self) -> float | None:
        next_run = self.next_run
        return None if next_run is None else (next_run - self.now()).total_seconds()


class Housekeeping:
    name = "housekeeping"

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.scheduler = ClockScheduler(self.clock)
        self.runs: dict[str, int] = {}

    def register(self, job_name: str, every_seconds: int, fn: Job) -> ClockJob:
        """Run ``fn(now)`` every *every_seconds*, first one period from now."""
        if any(job_name in job.tags for job in self.scheduler.get_jobs()):
            raise ValueError(f"housekeeping job {job_name!r} is already registered")
        self.runs[job_name] = 0
        return (
            self.scheduler.every(every_seconds)
            .seconds.do(self._guarded, job_name, fn)
            .tag(job_name)
        )

    def _guarded(self, job_name: str, fn: Job) -> None:
        try:
            fn(self.scheduler.now())
        except Exception as exc:  # one job's failure never stops the others
            if unavailable(exc):  # runs again at its next period; one line per outage
                OUTAGES.failed(exc, f"housekeeping {job_name}")
            else:
                log.exception("housekeeping job %s failed", job_name)
        self.runs[job_name] += 1

    def loop(self, now: datetime) -> float:
        with self.scheduler.at(now):
            self.scheduler.run_pending()
            idle = self.scheduler.idle_seconds
        return MAX_SLEEP if idle is None else min(MAX_SLEEP, max(0.0, idle))

    def shutdown(self, grace: float) -> None:
        self.scheduler.clear()


def purge_expired_sign_ins(now: datetime) -> int:
    """Delete expired sessions, OAuth states and CLI tickets (their rows are dead)."""
    with database.connection_context(), write_tx():
        return sum(
            model.delete().where(model.expires_at < now).execute()
            for model in (Session, OAuthState, CliTicket)
        )


def prune_audit_log(now: datetime, retention_days: int) -> int:
    """Delete audit lines older than *retention_days* (UPTIME_AUDIT_RETENTION_DAYS); how many."""
    cutoff = now - timedelta(days=retention_days)
    with database.connection_context(), write_tx():
        return AuditEvent.delete().where(AuditEvent.at < cutoff).execute()


def default_housekeeping(settings: Settings, clock: Clock | None = None) -> Housekeeping:
    """The daemon's housekeeping component with every default job registered."""
    housekeeping = Housekeeping(clock)
    housekeeping.register("purge-expired-sign-ins", 3600, purge_expired_sign_ins)
    days = settings.audit_retention_days
    housekeeping.register("prune-audit-log", 3600, lambda now: prune_audit_log(now, days))
    retention.register(housekeeping, settings)
    return housekeeping
