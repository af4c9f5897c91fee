"""Periodic housekeeping jobs (purges, retention), driven by the ``schedule`` package.

Only process-wide periodic jobs live here, never one job per monitor: checks
are scheduled by their persisted due times (``dispatcher``). Each part of the
daemon that needs a periodic job registers it with ``register(name,
every_seconds, fn)``; ``fn(now)`` receives the injected clock's time. A job
that raises is logged and runs again at its next period; it never stops the
others. Add default jobs in ``default_housekeeping``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

import schedule

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database, write_tx
from uptime_server.models import CliTicket, OAuthState, Session
from uptime_server.stats import retention

log = logging.getLogger(__name__)

MAX_SLEEP = 60.0

Job = Callable[[datetime], object]


class Housekeeping:
    name = "housekeeping"

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.scheduler = schedule.Scheduler()
        self.runs: dict[str, int] = {}

    def register(self, job_name: str, every_seconds: int, fn: Job) -> schedule.Job:
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
            fn(self.clock.now())
        except Exception:  # noqa: BLE001 - one job's failure never stops the others
            log.exception("housekeeping job %s failed", job_name)
        self.runs[job_name] += 1

    def loop(self, now: datetime) -> float:
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


def default_housekeeping(settings: Settings, clock: Clock | None = None) -> Housekeeping:
    """The daemon's housekeeping component with every default job registered."""
    housekeeping = Housekeeping(clock)
    housekeeping.register("purge-expired-sign-ins", 3600, purge_expired_sign_ins)
    retention.register(housekeeping, settings)
    return housekeeping
