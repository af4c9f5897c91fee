"""Is the engine doing its work? The verdict /healthz gives, from what it last did and now.

A monitor that has stopped monitoring must not say it is healthy. The engine
of a process (its scheduler, writer and database worker) is unhealthy when

- its database worker cannot use the database: its last write or claim
  failed because the database was unavailable (a restart, a failover, a lock
  held too long), and it has not succeeded since; or
- it is stalled: a check has been due for longer than ``T`` and the engine has
  neither recorded a result nor claimed a check in the last ``T``, where
  ``T = max(3 × the shortest interval among the checks due, 30 s)``.

"The checks due" are the checks the engine has claimed and not yet recorded
(waiting, running, or waiting for the writer), by their due times, and the
oldest check of its location due and not claimed by anyone. ``T`` is a few
intervals so that a check that runs long (its timeout, its retries) is never
taken for a stall, and at least 30 s so that one slow batch is not either.

Everything here is a pure function of the facts and *now*: the scheduler
gathers the facts (``CheckScheduler.health``), tests pass them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

STALL_INTERVALS = 3
STALL_FLOOR = 30.0  # seconds


@dataclass(frozen=True)
class EngineFacts:
    started_at: datetime  # when the engine started: it has done nothing before
    last_write_at: datetime | None  # the last batch of results written
    last_claim_at: datetime | None  # the last claim that took checks
    worker_unavailable_since: datetime | None  # failing on an unavailable database since
    due: Sequence[tuple[datetime, int]]  # (due time, interval in seconds) of the checks due


def stall_limit(intervals: Sequence[int]) -> float:
    """``T``: how long checks may wait with nothing recorded or claimed (see the module doc)."""
    return max(STALL_INTERVALS * min(intervals), STALL_FLOOR)


def verdict(facts: EngineFacts, now: datetime) -> str | None:
    """Why the engine is unhealthy at *now*, or None when it is healthy."""
    if facts.worker_unavailable_since is not None:
        down = max(0.0, (now - facts.worker_unavailable_since).total_seconds())
        return f"the engine's database worker cannot use the database (for {down:.0f} s)"
    overdue = [(due, interval) for due, interval in facts.due if due <= now]
    if not overdue:
        return None
    limit = stall_limit([interval for _, interval in overdue])
    waited = (now - min(due for due, _ in overdue)).total_seconds()
    done = [at for at in (facts.started_at, facts.last_write_at, facts.last_claim_at) if at]
    quiet = (now - max(done)).total_seconds()
    if waited > limit and quiet > limit:
        return (
            f"no check recorded or claimed for {quiet:.0f} s while checks are due "
            f"(the limit is {limit:.0f} s)"
        )
    return None
