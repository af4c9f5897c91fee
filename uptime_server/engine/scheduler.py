"""The check component: claim due checks, run them, hand the results to the writer.

Three threads cooperate:

- the component's own (driven by ``LoopRunner``, or called directly by tests
  and cron mode): each ``loop(now)`` has the ``Dispatcher`` name a claim of
  as many due checks as there is room for, has its ``Claims`` make it, and
  submits them (in the daemon the claim's transaction runs in the database
  worker, on the other core, and this thread only unpickles the claims);
- the probe loop (``ProbeLoop``): an asyncio loop running the checks through
  the process's one Prober, at most ``check_concurrency`` at once;
- the writer (``ResultWriter``): batches finished runs into transactions of
  its ``Records`` that also move each monitor's due time on and drop its lease.

Where the database work runs is the caller's choice, given explicitly as the
scheduler's ``claims`` and ``records`` (``engine.worker``): the daemon gives a
``DatabaseWorker`` as both (a child process on the other core), tests and cron
mode an ``InProcess``. The scheduler starts its ``records`` with its first
loop and closes it at shutdown.

Room: at most ``2 × check_concurrency`` checks are claimed and not finished,
so waiting checks never hold more leases than the process can soon run; while
every slot is busy, claims wait until there is room for half the concurrency
(the loop looks again when, at the rate checks have been ending, about that
many will have ended: between 10 and 100 ms, not every 10 ms, since each
look takes the GIL from the probe loop);
and nothing is claimed while the writer is more than ``WRITER_BACKLOG`` results
behind (the database is the bottleneck then; other processes may take over).

A check that raises in the probe (a bug, not a failing target) or cannot be
built from its monitor is logged and pushed forward to its next slot without
a run recorded; the recorder does the same for a run whose state logic raises.

Lag (``services["scheduler_lag"]``, ``dispatcher.scheduler_lag``; shown by /healthz as
``scheduler_lag_seconds``): how late the most overdue check of this location
is right now, in seconds: ``now − the oldest due time`` among the checks this
process has claimed and not started yet and the due, unclaimed rows in the
database; 0 when nothing is overdue. ``dispatch_lags`` keeps the measured
lag (start − due) of recent runs for benchmarks and metrics.

Leases: every check this process has claimed and not yet written (waiting,
running, or queued for the writer) is *held*; every third of
``UPTIME_LEASE_SECONDS`` the loop renews all held leases in one statement
(``Dispatcher.renew``), and so do ``settle`` and ``shutdown`` while they wait
for running checks. A claim the renewal finds lost (its lease expired and
another process took the check over) is no longer held and its result is
dropped when it arrives (``lost_results``); the recorder refuses it anyway.

An unavailable database (a restart, a failover, a lock held too long): a claim
or renewal that fails so is logged once per outage (``db.outages.OUTAGES``) and
tried again after a backoff of at most a few seconds. While a renewal has
failed, nothing is claimed: the leases of the checks waiting to be written may
have expired meanwhile, and they are renewed (nobody else took them, or the
renewal reports them lost) before this process could claim them a second time,
so the writer's retried batch still holds them.

Health (``services["engine_health"]``, /healthz): ``health()`` gathers what the
engine last did (written, claimed, failing on the database) and the checks due,
and ``engine.health.verdict`` says whether that is a working engine.

Shutdown (SIGTERM → ``shutdown(grace)``), all of it within *grace* seconds: stop
claiming; give back the leases of claimed checks that have not started (they
are due again for anyone at once); let started checks finish within the grace
period but its last part (a third, at most ``FLUSH_RESERVE``), then cancel what
is left and give back its leases too; flush the writer and close its
``records`` (the database worker) in what remains; what could not be written
by then is dropped, its checks due again when their leases expire.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from datetime import datetime, timedelta

from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database
from uptime_server.db.outages import OUTAGES, backoff, unavailable
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import (
    DEFAULT_BATCH,
    Claim,
    Claims,
    Dispatcher,
    LeaseKey,
    next_due,
    oldest_claimable,
    scheduler_lag,
)
from uptime_server.engine.health import EngineFacts, verdict
from uptime_server.engine.probe import Prober, Sleep
from uptime_server.engine.probe_loop import ProbeJob, ProbeLoop
from uptime_server.engine.spec import probe_config
from uptime_server.engine.writer import Item, Records, ResultWriter

log = logging.getLogger(__name__)

IDLE_MAX = 1.0  # seconds: new and resumed monitors are due "now" and seen this soon
BUSY_POLL = 0.01  # seconds: all room taken; look again once some checks have ended
BUSY_POLL_MAX = 0.1  # seconds: the longest such wait, however slowly checks end
WRITER_BACKLOG = 5000
RATE_WINDOW = 0.5  # seconds over which the rate checks end at is measured
FLUSH_RESERVE = 5.0  # seconds of the shutdown grace, at most, kept for the writer


class CheckScheduler:
    name = "scheduler"

    def __init__(
        self,
        settings: Settings,
        *,
        claims: Claims,
        records: Records,
        clock: Clock | None = None,
        location: str | None = None,
        worker_id: str | None = None,
        prober: Prober | None = None,
        sleep: Sleep = asyncio.sleep,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        """*claims* makes the claims the dispatcher names, *records* writes the
        results (see the module doc; often one object, ``engine.worker``'s)."""
        self.clock = clock or Clock()
        self.claims = claims
        self.records = records
        self.dispatcher = Dispatcher(
            settings, location=location, worker_id=worker_id, batch_size=batch_size
        )
        self.probes = ProbeLoop(
            probe_config(settings),
            concurrency=settings.check_concurrency,
            clock=self.clock,
            sleep=sleep,
            prober=prober,
            name=f"probes-{self.dispatcher.location}",
        )
        self.writer = ResultWriter(
            records,
            self.clock,
            on_written=self._written,
            name=f"writer-{self.dispatcher.location}",
        )
        self.max_pending = 2 * settings.check_concurrency
        # While every slot is busy and checks wait, claim in batches of at
        # least half the concurrency: a claim is a write transaction, and
        # claiming the few rows a poll's worth of ended checks made room for
        # costs more than the checks. Below `concurrency` pending, room is
        # always above this, so free slots are filled at once.
        self.min_claim = max(1, settings.check_concurrency // 2)
        self.dispatch_lags: deque[float] = deque(maxlen=100_000)
        self.dispatched = 0
        self.ended = 0  # checks ended (ran or cancelled), counted on the probe loop's thread
        self._rate_mark = (self.clock.monotonic(), 0)  # (when, ended then): the rate's window
        self._end_rate = 0.0  # checks ended per second over the last window
        self.services = {"scheduler_lag": self.lag, "engine_health": self.health}
        self._waiting: dict[int, Claim] = {}  # claimed, not started yet (by row id)
        self._unrun: list[Claim] = []  # cancelled before they ran: leases to give back
        # Claimed and not written yet: leases to renew, with (due time, interval).
        self._held: dict[LeaseKey, tuple[datetime, int]] = {}
        self._lost: set[LeaseKey] = set()  # held until a renewal found them taken over
        self.renew_every = settings.lease_seconds / 3
        self._next_renewal: datetime | None = None
        self._renew_failures = 0  # in a row; while any, nothing is claimed
        self._claim_failures = 0  # in a row, on an unavailable database
        self.started_at = self.clock.now()
        self.last_claim_at: datetime | None = None  # the last claim that took checks
        self.claims_unavailable_since: datetime | None = None
        self.lost_results = 0  # results dropped because their lease was lost
        self._lock = threading.Lock()
        self._stopping = False
        self._started = False

    @property
    def location(self) -> str:
        return self.dispatcher.location

    # -- one iteration -----------------------------------------------------

    def loop(self, now: datetime) -> float:
        """Claim and submit what is due; return seconds until it is worth looking again."""
        if self._stopping:
            return IDLE_MAX
        if not self._started:
            self.records.start()
            self._started = True
        renew_in = self._renew_when_due(now)
        if self._renew_failures:
            return renew_in  # leases first (see the module doc)
        return min(renew_in, self._claim_due(now))

    def _claim_due(self, now: datetime) -> float:
        room = self.max_pending - self.probes.busy
        if self.writer.backlog > WRITER_BACKLOG:
            return BUSY_POLL
        if room < self.min_claim:
            return self._until_room(room)
        limit = min(room, self.dispatcher.batch_size)
        try:
            claims = self._claim(now, limit)
        except Exception as exc:
            if not unavailable(exc):
                raise
            OUTAGES.failed(exc, self.name)
            if self.claims_unavailable_since is None:
                self.claims_unavailable_since = now
            self._claim_failures += 1
            return backoff(self._claim_failures - 1)
        self._claim_failures = 0
        self.claims_unavailable_since = None
        OUTAGES.recovered()
        if claims:
            self.last_claim_at = now
            counters.record_claim(now)
        if self._stopping:  # shutdown began while the claim was made: not run, given back
            with self._lock:
                self._unrun.extend(claims)
            return IDLE_MAX
        self._submit(claims)
        if len(claims) == limit:
            return 0.0 if limit == self.dispatcher.batch_size else BUSY_POLL
        return self._until_next(now)

    def _claim(self, now: datetime, limit: int) -> list[Claim]:
        request = self.dispatcher.next_request(now, limit)
        return [] if request is None else self.claims.claim(request)

    def _until_room(self, room: int) -> float:
        """Seconds until about ``min_claim - room`` more checks have ended, at their recent rate."""
        at, ended = self.clock.monotonic(), self.ended
        since, ended_then = self._rate_mark
        if at - since >= RATE_WINDOW:
            # A window much longer than RATE_WINDOW spans idle time: no rate yet.
            fresh = at - since < 2 * RATE_WINDOW
            self._end_rate = (ended - ended_then) / (at - since) if fresh else 0.0
            self._rate_mark = (at, ended)
        if self._end_rate <= 0:
            return BUSY_POLL
        return min(BUSY_POLL_MAX, max(BUSY_POLL, (self.min_claim - room) / self._end_rate))

    def _until_next(self, now: datetime) -> float:
        oldest = self.dispatcher.oldest_due(now)
        if oldest is None:
            return IDLE_MAX
        return min(IDLE_MAX, max(0.0, (oldest - now).total_seconds()))

    # -- leases ------------------------------------------------------------

    def _renew_when_due(self, now: datetime) -> float:
        """Renew the held leases if a third of a lease has passed (or the last renewal
        failed, after a backoff); seconds until the next time."""
        if self._next_renewal is None or now >= self._next_renewal:
            if self.renew(now):
                self._renew_failures = 0
                self._next_renewal = now + timedelta(seconds=self.renew_every)
            else:
                self._renew_failures += 1
                self._next_renewal = now + timedelta(
                    seconds=min(self.renew_every, backoff(self._renew_failures - 1))
                )
        return (self._next_renewal - now).total_seconds()

    def renew(self, now: datetime) -> bool:
        """Extend every held lease by one lease from *now*; forget the ones lost.

        False when the renewal failed (the next one tries again; the leases may
        expire meanwhile).
        """
        with self._lock:
            held = list(self._held)
        if not held:
            return True
        try:
            lost = self.dispatcher.renew(held, now)
        except Exception as exc:
            if unavailable(exc):
                OUTAGES.failed(exc, self.name)
            else:
                log.exception("%s: could not renew %d leases", self.name, len(held))
            return False
        OUTAGES.recovered()
        with self._lock:
            lost &= self._held.keys()  # not those written meanwhile (their leases were given back)
            for key in lost:
                del self._held[key]
            self._lost |= lost
        if lost:
            log.warning(
                "%s: %d checks were taken over by another process; their results are dropped",
                self.name,
                len(lost),
            )
        return True

    def _written(self, items: list[Item]) -> None:
        """On the writer's thread: these claims' leases are given back (or dropped)."""
        keys = {_lease_key(item) for item in items}
        with self._lock:
            for key in keys:
                self._held.pop(key, None)
            self._lost -= keys

    def _wait_renewing(self, wait: Callable[[float], bool], timeout: float | None) -> bool:
        """Call ``wait(seconds)`` until it returns True, renewing leases between waits."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            step = self.renew_every if left is None else min(left, self.renew_every)
            if wait(step):
                return True
            if left is not None and left <= step:
                return False
            self.renew(self.clock.now())

    # -- submitting ----------------------------------------------------------

    def _submit(self, claims: list[Claim]) -> None:
        with self._lock:
            self._held.update((claim.lease_key, (claim.due, claim.interval)) for claim in claims)
        jobs = []
        for claim in claims:
            if claim.spec is None:
                log.error(
                    "monitor %s: %s; pushed to its next slot", claim.monitor_id, claim.spec_error
                )
                self.writer.put(claim)  # pushed forward
                continue
            jobs.append(ProbeJob(claim.spec, key=claim))
        with self._lock:
            for job in jobs:
                self._waiting[job.key.row_id] = job.key
        self.dispatched += len(jobs)
        self.probes.submit(jobs, self._on_done)

    def _on_done(self, jobs: list[ProbeJob]) -> None:
        """On the probe loop's thread: turn ended jobs into work for the writer, at once."""
        self.ended += len(jobs)
        with self._lock:
            for job in jobs:
                self._waiting.pop(job.key.row_id, None)
            self._unrun.extend(job.key for job in jobs if job.cancelled)
            for job in jobs:
                if job.cancelled:
                    self._held.pop(job.key.lease_key, None)
            lost = [job for job in jobs if job.key.lease_key in self._lost]
            self._lost.difference_update(job.key.lease_key for job in lost)
        if lost:
            self.lost_results += len(lost)
            log.warning(
                "%s: dropped %d results of checks another process took over", self.name, len(lost)
            )
        dropped = {id(job) for job in lost}
        ran = [job for job in jobs if not job.cancelled and id(job) not in dropped]
        lags = [
            (job.started_at - job.key.due).total_seconds()
            for job in ran
            if job.started_at is not None
        ]
        self.dispatch_lags.extend(lags)
        counters.record_dispatch_delays(lags)
        now = self.clock.now()
        statuses: Counter[str] = Counter()
        items = [self._item(job, now, statuses) for job in ran]
        counters.record_checks(statuses)
        self.writer.put_many(items)

    def _item(self, job: ProbeJob, now: datetime, statuses: Counter[str]) -> Item:
        claim: Claim = job.key
        result = job.result
        if job.error is not None or result is None or job.started_at is None:
            counters.record_check_error()
            log.error(
                "monitor %s: check crashed (%r); pushed to its next slot",
                claim.monitor_id,
                job.error,
            )
            return claim  # pushed forward
        try:
            next_check_at = (result.next_due or (lambda at: next_due(claim, at)))(now)
        except Exception as exc:
            # A row the API would have refused (a heartbeat's cron edited in the
            # database): this monitor waits for its next slot, the batch goes on.
            counters.record_check_error()
            log.error(
                "monitor %s: its next due time failed (%r); pushed to its next slot",
                claim.monitor_id,
                exc,
            )
            return claim
        # The recorder decides degraded/certificate warnings; this counter
        # only separates failed runs and runs that needed a retry.
        label = "offline" if not result.passed else "warning" if result.retried else "online"
        statuses[label] += 1
        return CheckOutcome.from_run(
            result,
            monitor_id=claim.monitor_id,
            monitor_created_at=claim.monitor_created_at,
            location=claim.location,
            checked_at=job.started_at,
            next_check_at=next_check_at,
            lease_owner=claim.lease_owner,
        )

    # -- waiting, cron mode, shutdown --------------------------------------

    def settle(self, timeout: float | None = 30.0) -> bool:
        """Wait until every submitted check has ended and its result is written."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._wait_renewing(self.probes.wait_idle, timeout):
            return False
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        return self.writer.flush(left)

    def run_due(self, now: datetime | None = None) -> int:
        """Cron mode: run every check due at *now* once, write the results, return the count."""
        now = now or self.clock.now()
        total = 0
        while True:
            below = self.max_pending - self.min_claim + 1
            self._wait_renewing(lambda t, n=below: self.probes.wait_below(n, t), None)
            limit = min(self.max_pending - self.probes.busy, self.dispatcher.batch_size)
            claims = self._claim(now, limit)
            self._submit(claims)
            total += len(claims)
            if len(claims) < limit:
                break
        self.settle(None)
        return total

    def shutdown(self, grace: float, *, flush: float | None = None) -> None:
        """Stop within *grace* seconds (see the module doc).

        *flush*: seconds for the writer beyond *grace* (``close``: checks are
        not waited for, what is queued is still written); by default the
        writer has the last part of *grace*.
        """
        start = time.monotonic()
        if flush is None:
            flush = min(grace / 3, FLUSH_RESERVE)
            grace -= flush
        deadline = start + grace + flush
        self._stopping = True
        self.probes.cancel()  # claimed, not started: given back below, due for anyone
        if not self._wait_renewing(self.probes.wait_idle, grace):
            log.warning("%s: checks still running after %.0fs; cancelled", self.name, grace)
        self.probes.close(min(0.5, max(0.05, (deadline - time.monotonic()) / 4)))
        self.writer.stop(timeout=max(0.0, deadline - time.monotonic()))
        self.records.close(max(0.1, deadline - time.monotonic()))
        self._release_unrun()

    def close(self) -> None:
        """Release everything without waiting for checks (tests, cron mode)."""
        self.shutdown(0, flush=10.0)

    def _release_unrun(self) -> None:
        with self._lock:
            unrun, self._unrun = self._unrun, []
        if unrun:
            try:
                self.dispatcher.release(unrun)
            except Exception as exc:  # leases expire anyway
                if unavailable(exc):
                    OUTAGES.failed(exc, self.name)
                else:
                    log.exception("%s: could not give back %d leases", self.name, len(unrun))

    # -- health ------------------------------------------------------------

    def lag(self) -> float:
        now = self.clock.now()
        with self._lock:
            waiting = [c.due for c in self._waiting.values()]
        with database.connection_context():
            return scheduler_lag(now, location=self.location, waiting=waiting)

    def health(self) -> str | None:
        """Why this engine is not doing its work, or None (``engine.health.verdict``).

        Reads the oldest unclaimed due check from the database, on the
        caller's thread: a database the caller cannot reach raises.
        """
        now = self.clock.now()
        with self._lock:
            due = list(self._held.values())
        with database.connection_context():
            unclaimed = oldest_claimable(now, self.location)
        if unclaimed is not None:
            due.append(unclaimed)
        failing = [
            at
            for at in (self.writer.unavailable_since, self.claims_unavailable_since)
            if at is not None
        ]
        facts = EngineFacts(
            started_at=self.started_at,
            last_write_at=self.writer.last_written_at,
            last_claim_at=self.last_claim_at,
            worker_unavailable_since=min(failing) if failing else None,
            due=due,
        )
        return verdict(facts, now)


def _lease_key(item: Item) -> LeaseKey:
    return (item.monitor_id, item.location, item.lease_owner or "")
