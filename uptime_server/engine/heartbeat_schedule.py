"""When a heartbeat monitor expects its next ping: pure functions of their arguments.

A heartbeat monitor has either a ``period`` (seconds) or a ``cron``
expression read in ``timezone`` (IANA, default UTC), plus ``grace``
(seconds). After a finished run (a success, ``fail`` or exit-code ping) at
time T, the next ping is *expected* at T + period, or at the first cron fire
after T, and the monitor is overdue once the *deadline*, expected + grace, has
passed. Before the first ping, T is when the monitor was created (or resumed).

Cron fire times are computed by croniter in the monitor's time zone on
zoneinfo-aware datetimes, so "0 3 * * *" in Europe/Berlin is 03:00 local time
on both sides of a DST change (01:00 UTC in summer, 02:00 UTC in winter).

An overdue verdict rolls the schedule on by one expected slot: each slot
missed is one failed run, so ``alert_threshold`` counts missed runs. After a
stall (the daemon was down for many slots) the missed slots are skipped, not
replayed: the next deadline is the first that is still ahead of now.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from croniter import croniter

MAX_SKIP = 100_000  # slots; a schedule never has to skip more (a minutely cron over ~2 months)


@dataclass(frozen=True)
class HeartbeatSchedule:
    grace: int
    period: int | None = None
    cron: str | None = None
    timezone: str = "UTC"

    @classmethod
    def of(cls, monitor: Any) -> HeartbeatSchedule:
        """The schedule of a monitor row, or of a mapping of its columns."""
        get = monitor.get if isinstance(monitor, Mapping) else lambda n: getattr(monitor, n)
        return cls(
            grace=int(get("grace") or 0),
            period=get("period"),
            cron=get("cron"),
            timezone=get("timezone") or "UTC",
        )

    def expected_after(self, moment: datetime) -> datetime:
        """When the next ping is expected, the last run having finished at *moment*."""
        if self.cron:
            local = moment.astimezone(ZoneInfo(self.timezone))
            fire = croniter(self.cron, local).get_next(datetime)
            return fire.astimezone(UTC)
        return moment + timedelta(seconds=self.period or 0)

    def deadline_after(self, moment: datetime) -> datetime:
        """The deadline of the next ping after a run finished at *moment*."""
        return self.expected_after(moment) + timedelta(seconds=self.grace)

    def next_deadline(self, missed: datetime, now: datetime) -> datetime:
        """The deadline after the one that was *missed*: the first still ahead of *now*."""
        expected = missed - timedelta(seconds=self.grace)
        for _ in range(MAX_SKIP):
            expected = self.expected_after(expected)
            if expected + timedelta(seconds=self.grace) > now:
                break
        else:
            expected = self.expected_after(now)
        return expected + timedelta(seconds=self.grace)

    def first_deadline(self, since: datetime, now: datetime) -> datetime:
        """The deadline of a monitor whose last run (or creation) was at *since*.

        Used when the schedule itself changes (create, resume, edit): never
        in the past, so a change never makes a monitor overdue at once.
        """
        deadline = self.deadline_after(since)
        return deadline if deadline > now else self.next_deadline(deadline, now)


def valid_cron(expression: str) -> bool:
    return croniter.is_valid(expression) and len(expression.split()) == 5
