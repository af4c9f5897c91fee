"""The agent's cycle: claim → run with the engine's probes → post results in batches.

``Agent.loop(now)`` is one turn; ``run`` drives it until stopped. One turn:

1. look at the canary (if its interval has passed);
2. move finished checks into the disk buffer, as new batches (each result
   carries its lease, and is marked not counted if it failed while the
   canary failed);
3. flush the buffer, oldest batch first: results whose lease has expired are
   dropped and counted, the rest posted under the batch's id;
4. renew the leases of every check still running or with a result not yet
   posted, every third of a lease, in one request;
5. claim more due checks if there is room.

When the server cannot be reached (no answer, 5xx) the turn stops there: the
checks already claimed keep running and their results wait on disk; the
next turns try again with a growing delay. A lease's expiry is kept on the
agent's own clock (the time of the claim or renewal request plus the
lease), so a result is never posted after its lease could have lapsed: the
server would refuse it anyway, and another agent may have run that check.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from uptime_server import __version__
from uptime_server.checks.rules import stored_error
from uptime_server.checks.wire import claimed_spec
from uptime_server.clock import Clock, isoformat
from uptime_server.engine.probe_loop import ProbeJob, ProbeLoop
from uptime_server.probe_agent.buffer import Batch, DiskBuffer, Result
from uptime_server.probe_agent.canary import Canary
from uptime_server.probe_agent.client import AgentClient, Refused, Unreachable

log = logging.getLogger(__name__)

BATCH_SIZE = 200  # results per post (well under the API's 1 MiB body limit)
CLAIM_BATCH = 100
POLL = 1.0  # seconds between claims when nothing was due
RETRY_DELAYS = (1, 2, 5, 10, 30)  # seconds between tries while the server is unreachable
WINDOW = 60.0  # seconds over which checks per second and lag are reported

Key = tuple[int, str]  # (monitor id, lease owner)


@dataclass
class Lease:
    monitor_id: int
    owner: str
    due: datetime
    expires_at: datetime  # on the agent's clock

    @property
    def key(self) -> Key:
        return (self.monitor_id, self.owner)


@dataclass
class Counts:
    posted: int = 0
    recorded: int = 0
    refused: int = 0
    expired: int = 0  # buffered past their lease: dropped
    lost: int = 0  # the server said another holder has the lease: dropped
    crashed: int = 0


class Agent:
    def __init__(
        self,
        client: AgentClient,
        probes: ProbeLoop,
        buffer: DiskBuffer,
        *,
        clock: Clock | None = None,
        canary: Canary | None = None,
        max_pending: int = 200,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.client = client
        self.probes = probes
        self.buffer = buffer
        self.clock = clock or Clock()
        self.canary = canary or Canary(())
        self.max_pending = max_pending
        self.batch_size = batch_size
        self.leases: dict[Key, Lease] = {}
        self.lease_seconds = 15.0
        self.renew_every = 5.0
        self.online = True
        self.counts = Counts()
        self.wake = threading.Event()  # set when checks end: the runner need not wait
        self._lock = threading.Lock()
        self._ended: deque[ProbeJob] = deque()
        self._next_renewal: datetime | None = None
        self._failures = 0
        self._retry_at: datetime | None = None
        self._recent: deque[tuple[datetime, float]] = deque()  # (ended at, start lag)

    # -- one turn ----------------------------------------------------------------

    def loop(self, now: datetime) -> float:
        """One turn of the cycle; seconds until the next is worth taking."""
        self.canary.check(now)
        self._buffer_ended(now)
        if self._retry_at is not None and now < self._retry_at:
            return (self._retry_at - now).total_seconds()
        try:
            self._flush(now)
            renew_in = self._renew_when_due(now)
            claimed, limit = self._claim(now)
        except Unreachable as exc:
            delay = RETRY_DELAYS[min(self._failures, len(RETRY_DELAYS) - 1)]
            if self.online:
                log.warning("server unreachable (%s); buffering results on disk", exc)
            self.online = False
            self._failures += 1
            self._retry_at = now + timedelta(seconds=delay)
            return float(delay)
        if not self.online:
            log.info("server reachable again; buffered results flushed")
        self.online, self._failures, self._retry_at = True, 0, None
        poll = 0.0 if claimed and claimed == limit else POLL
        return min(poll, renew_in)

    @property
    def degraded(self) -> bool:
        return self.canary.failing

    def status(self, now: datetime | None = None) -> dict[str, Any]:
        """What the agent tells the server about itself (and logs)."""
        now = now or self.clock.now()
        while self._recent and (now - self._recent[0][0]).total_seconds() > WINDOW:
            self._recent.popleft()
        lags = [lag for _at, lag in self._recent]
        return {
            "version": __version__,
            "degraded": self.degraded,
            "checks_per_second": round(len(lags) / WINDOW, 3),
            "lag_seconds": round(max(lags), 3) if lags else 0.0,
            "dropped_results": self.dropped,
        }

    @property
    def dropped(self) -> int:
        return self.counts.expired + self.counts.lost + self.buffer.dropped

    # -- finished checks → the buffer ---------------------------------------------

    def _on_done(self, jobs: list[ProbeJob]) -> None:
        """On the probe loop's thread: hand the ended jobs to the next turn."""
        with self._lock:
            self._ended.extend(jobs)
        self.wake.set()

    def _buffer_ended(self, now: datetime) -> None:
        with self._lock:
            ended, self._ended = list(self._ended), deque()
        results = [r for r in (self._result(job, now) for job in ended) if r is not None]
        if results:
            self.buffer.add(results, self.batch_size)

    def _result(self, job: ProbeJob, now: datetime) -> Result | None:
        lease: Lease = job.key
        if job.cancelled:
            self.leases.pop(lease.key, None)  # never run: its lease lapses, someone runs it
            return None
        result = job.result
        if job.error is not None or result is None or job.started_at is None:
            log.error("monitor %s: check crashed (%r)", lease.monitor_id, job.error)
            self.counts.crashed += 1
            self.leases.pop(lease.key, None)
            return None
        self._recent.append((now, max(0.0, (job.started_at - lease.due).total_seconds())))
        return {
            "monitor_id": lease.monitor_id,
            "lease_owner": lease.owner,
            "checked_at": isoformat(job.started_at),
            "passed": result.passed,
            "response_time": result.response_time,
            "status_code": result.status_code,
            "error": stored_error(result.error),
            "attempts": result.attempts,
            "retried": result.retried,
            "cert_expires_at": isoformat(result.cert_expires_at)
            if result.cert_expires_at
            else None,
            "cert_serial": result.cert_serial,
            # A failure seen while our own uplink fails says nothing of the target.
            "counted": result.passed or not self.degraded,
            "lease_expires_at": isoformat(lease.expires_at),
        }

    # -- the buffer → the server ----------------------------------------------------

    def _flush(self, now: datetime) -> None:
        for batch in self.buffer.batches:
            if not batch.sent:
                # A batch posted before goes again whole: its first answer may
                # be what was lost, the server answering its id with what it
                # recorded then; what it did not take it refuses, and says why.
                self._drop_expired(batch, now)
            if not batch.results:
                continue
            self._post(batch, now)

    def _drop_expired(self, batch: Batch, now: datetime) -> None:
        def live(result: Result) -> bool:
            lease = self.leases.get((result["monitor_id"], result["lease_owner"]))
            if lease is None:
                # Not held any more (a restart, or the server gave it to another):
                # only the expiry stored with the result tells.
                return datetime.fromisoformat(result["lease_expires_at"]) > now
            return lease.expires_at > now

        expired: list[Result] = []
        dropped = self.buffer.keep_only(batch, lambda r: live(r) or bool(expired.append(r)))
        for result in expired:
            self.leases.pop((result["monitor_id"], result["lease_owner"]), None)
        if dropped:
            self.counts.expired += dropped
            log.warning(
                "dropped %d buffered results whose lease expired (%d so far)",
                dropped,
                self.counts.expired,
            )

    def _post(self, batch: Batch, now: datetime) -> None:
        posted = [{k: v for k, v in r.items() if k != "lease_expires_at"} for r in batch.results]
        self.buffer.mark_sent(batch)  # before: a crash mid-post leaves it marked
        try:
            answer = self.client.post_results(batch.batch_id, posted, self.status(now))
        except Unreachable as exc:
            if not exc.maybe_delivered:
                self.buffer.mark_sent(batch, False)  # no connection: the server has none of it
            raise
        except Refused as exc:
            if exc.status in (401, 403):
                raise  # this agent may not post at all: stop, keep the buffer
            # The server will never take this batch (a bug on one side):
            # keeping it would block every later one.
            log.error("batch %s refused (%s); %d results dropped", batch.batch_id, exc, len(posted))
            self.counts.refused += len(posted)
            answer = {"results": []}
        self.counts.posted += len(posted)
        self.counts.recorded += int(answer.get("recorded", 0))
        refused = [r for r in answer.get("results", []) if r.get("status") == "refused"]
        # A lease the server no longer knows (it expired while the answer to
        # an earlier post of this batch was lost, or another holder took the
        # check) drops its result, as the agent drops one it knows expired.
        lost = sum(1 for r in refused if r.get("reason") == "lease_lost")
        self.counts.lost += lost
        self.counts.refused += len(refused) - lost
        for item in refused:
            log.warning(
                "monitor %s: result refused (%s)", item.get("monitor_id"), item.get("reason")
            )
        for result in batch.results:
            self.leases.pop((result["monitor_id"], result["lease_owner"]), None)
        self.buffer.done(batch)

    # -- leases ----------------------------------------------------------------------

    def _renew_when_due(self, now: datetime) -> float:
        if self._next_renewal is None or now >= self._next_renewal:
            self.renew(now)
            self._next_renewal = now + timedelta(seconds=self.renew_every)
        return max(0.0, (self._next_renewal - now).total_seconds())

    def renew(self, now: datetime) -> None:
        """Renew every lease held (running or with a result buffered), in one request."""
        held = list(self.leases.values())
        if not held:
            return
        refs = [{"monitor_id": lease.monitor_id, "lease_owner": lease.owner} for lease in held]
        answer = self.client.renew(refs, self.status(now))
        until = now + timedelta(seconds=self.lease_seconds)
        for ref in answer.get("renewed", []):
            lease = self.leases.get((ref["monitor_id"], ref["lease_owner"]))
            if lease is not None:
                lease.expires_at = until
        lost = {(ref["monitor_id"], ref["lease_owner"]) for ref in answer.get("lost", [])}
        for key in lost:
            self.leases.pop(key, None)
        if lost:
            self._drop_lost(lost)

    def _drop_lost(self, lost: set[Key]) -> None:
        for batch in self.buffer.batches:
            dropped = self.buffer.keep_only(
                batch, lambda r: (r["monitor_id"], r["lease_owner"]) not in lost
            )
            self.counts.lost += dropped
        log.warning("%d leases were taken over by another holder; their results dropped", len(lost))

    # -- claiming ----------------------------------------------------------------------

    def _claim(self, now: datetime) -> tuple[int, int]:
        limit = min(CLAIM_BATCH, self.max_pending - self.probes.busy)
        if limit <= 0:
            return 0, 0
        answer = self.client.claim(limit, self.status(now))
        self.lease_seconds = float(answer.get("lease_seconds", self.lease_seconds))
        self.renew_every = float(answer.get("renew_every_seconds", self.lease_seconds / 3))
        until = now + timedelta(seconds=self.lease_seconds)
        jobs = []
        for claim in answer.get("data", []):
            lease = Lease(
                claim["monitor_id"],
                claim["lease_owner"],
                datetime.fromisoformat(claim["due"]),
                until,
            )
            self.leases[lease.key] = lease
            # The server's private-target policy rides with each claim: its
            # checks are refused here as the server's own probes refuse them.
            jobs.append(ProbeJob(claimed_spec(claim), key=lease))
        self.probes.submit(jobs, self._on_done)
        return len(jobs), limit

    # -- running until stopped -----------------------------------------------------

    def run(self, stop: threading.Event, *, grace: float = 30.0) -> None:
        """Take turns until *stop* is set; then finish running checks and flush once."""
        try:
            while not stop.is_set():
                wait = self.loop(self.clock.now())
                self.wake.clear()
                if wait > 0:
                    _wait_any((stop, self.wake), wait)
        finally:
            self.shutdown(grace)

    def shutdown(self, grace: float) -> None:
        self.probes.cancel()  # not started: their leases lapse, someone else runs them
        self.probes.wait_idle(grace)
        now = self.clock.now()
        self._buffer_ended(now)
        try:
            self._flush(now)
        except (Unreachable, Refused):
            log.warning(
                "server unreachable at shutdown: %d results stay buffered", len(self.buffer)
            )
        self.probes.close()
        self.client.close()


def _wait_any(events: Iterable[threading.Event], timeout: float) -> None:
    """Wait until one of *events* is set or *timeout* passes (short steps; no busy loop)."""
    events = tuple(events)
    step = min(timeout, 0.1)
    waited = 0.0
    while waited < timeout and not any(e.is_set() for e in events):
        events[0].wait(step)
        waited += step
