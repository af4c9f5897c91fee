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

Every deadline is found in at most two steps, never by walking the slots in
between: a period's next slot is counted out (whole periods since the slot
missed), a cron's is its first fire after the later of the slot missed and
now - grace (one croniter step, whose own search croniter bounds). A cron
that gives no fire there (stored without the API's check, which refuses one
that never fires) fails closed: the deadline is ``FALLBACK`` (one day) on,
and the monitor's id is logged; the monitor is not left without a deadline.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter

from uptime_server.maintenance.recurrence import Failures

log = logging.getLogger(__name__)
FAILURES = Failures(log)  # once per monitor every 10 minutes

# The deadline of a cron that gives no next fire: one day on (docs/heartbeats.md).
FALLBACK = timedelta(days=1)


@dataclass(frozen=True)
class HeartbeatSchedule:
    grace: int
    period: int | None = None
    cron: str | None = None
    timezone: str = "UTC"
    monitor_id: int | None = field(default=None, compare=False)  # for the log

    @classmethod
    def of(cls, monitor: Any) -> HeartbeatSchedule:
        """The schedule of a monitor row, or of a mapping of its columns."""
        get = monitor.get if isinstance(monitor, Mapping) else lambda n: getattr(monitor, n, None)
        return cls(
            grace=int(get("grace") or 0),
            period=get("period"),
            cron=get("cron"),
            timezone=get("timezone") or "UTC",
            monitor_id=get("id"),
        )

    def expected_after(self, moment: datetime) -> datetime:
        """When the next ping is expected, the last run having finished at *moment*."""
        if self.cron:
            local = moment.astimezone(ZoneInfo(self.timezone))
            try:
                if not fires(self.cron):
                    raise CroniterBadDateError(self.cron)
                fire = croniter(self.cron, local).get_next(datetime)
            except CroniterBadDateError:
                FAILURES.warn(
                    self.monitor_id,
                    "heartbeat monitor %s: cron %r gives no next fire; deadline in %s",
                    self.monitor_id,
                    self.cron,
                    FALLBACK,
                )
                return moment + FALLBACK
            return fire.astimezone(UTC)
        return moment + timedelta(seconds=self.period or 0)

    def deadline_after(self, moment: datetime) -> datetime:
        """The deadline of the next ping after a run finished at *moment*."""
        return self.expected_after(moment) + timedelta(seconds=self.grace)

    def next_deadline(self, missed: datetime, now: datetime) -> datetime:
        """The deadline after the one that was *missed*: the first still ahead of *now*."""
        grace = timedelta(seconds=self.grace)
        missed_slot = missed - grace
        # The first slot after missed_slot whose deadline is after now: after now - grace.
        if self.cron or not self.period:
            return self.expected_after(max(missed_slot, now - grace)) + grace
        period = timedelta(seconds=self.period)
        behind = max(timedelta(0), now - grace - missed_slot)
        return missed_slot + (behind // period + 1) * period + grace

    def first_deadline(self, since: datetime, now: datetime) -> datetime:
        """The deadline of a monitor whose last run (or creation) was at *since*.

        Used when the schedule itself changes (create, resume, edit): never
        in the past, so a change never makes a monitor overdue at once.
        """
        deadline = self.deadline_after(since)
        return deadline if deadline > now else self.next_deadline(deadline, now)


def valid_cron(expression: str) -> bool:
    return croniter.is_valid(expression) and len(expression.split()) == 5


@functools.lru_cache(maxsize=1024)
def fires(expression: str) -> bool:
    """A valid expression that gives a date at all ("0 0 30 2 *" gives none).

    Remembered: croniter searches 50 years before it gives up on one.
    """
    try:
        croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        return False
    return True
