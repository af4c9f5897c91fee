"""An asyncio loop in its own thread, running checks through one shared Prober.

Other threads submit checks; at most ``concurrency`` (the process's
``check_concurrency``) run at once, with the one Prober of this loop, whose
TLS contexts and HTTP session are built once. Submitted jobs wait in a queue;
up to ``concurrency`` worker tasks take them one after the other, so a check
costs no task and no semaphore wait of its own. Ended jobs are handed to
their callback in lists, once per turn of the loop, on the loop thread,
whether they passed, failed, raised (a bug in our code: ``job.error``) or were
cancelled before they started: the receiver handles many results per call,
not one thread hand-off per check.

A check that has run for ``park_after`` seconds (1 s) is waiting on its
target, not using the CPU the bound is there for: while jobs queue, such a
check is *parked*. It no longer counts against the concurrency, another
worker starts in its place, and its own worker ends with it. At most
``PARKED_PER_SLOT`` × concurrency checks are parked at once, which bounds
the sockets a process holds. Without it, targets that hang until their
timeout held the slots, and a few hanging targets delayed every other check
(``make bench-checks``, phase c;
bench/README.md#parked-checks-hanging-targets-no-longer-hold-the-slots).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from uptime_server.checks.types import CheckSpec, RunResult
from uptime_server.clock import Clock
from uptime_server.engine.probe import ProbeConfig, Prober, Sleep
from uptime_server.engine.spec import run_budget

log = logging.getLogger(__name__)

PARK_AFTER = 1.0  # seconds a check runs before it may stop counting against the bound
PARKED_PER_SLOT = 2  # parked checks at most, per slot of concurrency


def new_event_loop(kind: str) -> asyncio.AbstractEventLoop:
    """A new event loop: uvloop's for ``"uvloop"`` where it is installed, else asyncio's.

    The probes are all event loop: a plain HTTP check spends most of its CPU
    in the loop and aiohttp, a TLS handshake in the loop's SSL transport. On
    uvloop a check costs less CPU than on asyncio's own loop, the same code
    and behaviour otherwise (bench/README.md). ``UPTIME_EVENT_LOOP=asyncio``
    keeps the standard library's loop.
    """
    if kind == "uvloop":
        try:
            import uvloop
        except ImportError:  # a platform without it (Windows): asyncio's loop
            log.debug("uvloop is not installed: the probes run on asyncio's event loop")
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


@dataclass(eq=False)
class ProbeJob:
    spec: CheckSpec
    key: Any = None
    started_at: datetime | None = None  # wall clock when a slot was granted
    result: RunResult | None = None
    error: BaseException | None = None
    cancelled: bool = False
    # Seconds the whole run (every attempt and retry pause) may take once
    # started; past it the run is cancelled and ``timed_out`` set.
    deadline: float | None = None
    timed_out: bool = False


OnDone = Callable[[list[ProbeJob]], None]


class ProbeLoop:
    """Owns the thread, the event loop, the job queue, the workers and the Prober."""

    def __init__(
        self,
        config: ProbeConfig,
        *,
        concurrency: int,
        clock: Clock | None = None,
        sleep: Sleep = asyncio.sleep,
        prober: Prober | None = None,
        name: str = "probes",
        park_after: float = PARK_AFTER,
    ) -> None:
        self.clock = clock or Clock()
        self.prober = prober or Prober(config)
        self._sleep = sleep
        self._concurrency = max(1, concurrency)
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # Touched on the loop thread only:
        self._queue: deque[tuple[ProbeJob, OnDone]] = deque()  # submitted, not started
        self._running: dict[asyncio.Task[None], ProbeJob | None] = {}  # worker → its current job
        self._ended: dict[OnDone, list[ProbeJob]] = {}  # to hand over this turn
        self._pending = 0
        self._park_after = park_after
        self._park_limit = PARKED_PER_SLOT * self._concurrency
        self._since: dict[asyncio.Task[None], float] = {}  # worker → when its job started
        self._parked: set[asyncio.Task[None]] = set()
        self._sweep_due = False
        self._cond = threading.Condition()
        self._start_lock = threading.Lock()

    # -- life cycle --------------------------------------------------------

    def start(self) -> None:
        with self._start_lock:
            if self._loop is not None:
                return
            loop = new_event_loop(self.prober.config.event_loop)
            self._thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
            self._loop = loop
            self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what is left, close the Prober's session, stop the thread."""
        loop = self._loop
        if loop is None:
            return
        self.cancel(started_too=True)
        self.wait_idle(timeout)
        try:
            asyncio.run_coroutine_threadsafe(self.prober.close(), loop).result(timeout)
        except (FutureTimeout, RuntimeError):
            log.warning("%s: prober did not close in time", self._name)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
        if not loop.is_running():
            loop.close()
        self._loop = None

    # -- submitting --------------------------------------------------------

    @property
    def pending(self) -> int:
        """Jobs submitted and not ended yet (waiting for a slot or running)."""
        return self._pending

    @property
    def parked(self) -> int:
        """Running jobs parked: past ``park_after`` while others queued."""
        return len(self._parked)

    @property
    def busy(self) -> int:
        """Pending jobs that count against the concurrency: all but the parked ones."""
        return self._pending - self.parked

    def submit(self, jobs: Iterable[ProbeJob], on_done: OnDone) -> None:
        """Run *jobs*; *on_done* gets them back in lists as they end."""
        batch = list(jobs)
        if not batch:
            return
        self.start()
        assert self._loop is not None
        with self._cond:
            self._pending += len(batch)
        self._loop.call_soon_threadsafe(self._enqueue, batch, on_done)

    def run_sync(
        self, spec: CheckSpec, timeout: float | None = None, *, deadline: float | None = None
    ) -> ProbeJob:
        """Run one check now and wait for it (the API's "test" endpoint).

        With a *deadline* the run is cancelled after that many seconds and
        comes back with ``timed_out`` set. *timeout* bounds the wait itself
        (a backstop: by default the run's budget, or its deadline, plus 30 s).
        """
        done = threading.Event()
        job = ProbeJob(spec, deadline=deadline)
        self.submit([job], lambda _jobs: done.set())
        if timeout is not None:
            limit = timeout
        else:
            limit = (deadline if deadline is not None else run_budget(spec)) + 30
        if not done.wait(limit):
            raise TimeoutError(f"check did not finish within {limit:.0f}s")
        return job

    def _enqueue(self, batch: list[ProbeJob], on_done: OnDone) -> None:
        self._queue.extend((job, on_done) for job in batch)
        self._add_workers()

    def _add_workers(self) -> None:
        assert self._loop is not None
        free = self._concurrency - (len(self._running) - len(self._parked))
        for _ in range(min(len(self._queue), free)):
            task = self._loop.create_task(self._work())
            # Registered now, so a cancel() before the task's first step sees
            # it; dropped when it ends, even if it never got to run.
            self._running[task] = None
            task.add_done_callback(self._forget)
        if self._queue and not self._sweep_due:
            # Every slot is taken and jobs wait: look for checks to park.
            self._sweep_due = True
            self._loop.call_later(self._park_after / 4, self._sweep)

    def _sweep(self) -> None:
        """Park the checks that have run past ``park_after``; start workers in their place."""
        self._sweep_due = False
        if not self._queue:
            return
        assert self._loop is not None
        cutoff = self._loop.time() - self._park_after
        before = len(self._parked)
        room = self._park_limit - before
        for task, since in self._since.items():
            if room <= 0:
                break
            if since <= cutoff and task not in self._parked:
                self._parked.add(task)
                room -= 1
        if len(self._parked) != before:
            with self._cond:
                self._cond.notify_all()  # busy went down: wait_below may be over
        self._add_workers()

    async def _work(self) -> None:
        """One worker: run queued jobs one after the other until the queue is empty."""
        task = asyncio.current_task()
        assert task is not None
        clock = asyncio.get_running_loop().time
        try:
            while self._queue:
                job, on_done = self._queue.popleft()
                self._running[task] = job
                self._since[task] = clock()
                try:
                    job.started_at = self.clock.now()
                    job.result = await self._run(job)
                except asyncio.CancelledError:
                    job.cancelled = True
                    self._end(job, on_done)
                    raise
                except Exception as exc:  # a bug in one check is that check's problem
                    job.error = exc
                self._end(job, on_done)
                if task in self._parked:
                    break  # another worker has its slot
        finally:
            # At once, not in the done callback a turn later: jobs queued in
            # between must see this slot free.
            self._forget(task)

    async def _run(self, job: ProbeJob) -> RunResult | None:
        run = self.prober.run(job.spec, sleep=self._sleep)
        if job.deadline is None:
            return await run
        try:
            async with asyncio.timeout(job.deadline) as limit:
                return await run
        except TimeoutError:
            if not limit.expired():
                raise
            job.timed_out = True
            return None

    def _forget(self, task: asyncio.Task[None]) -> None:
        self._running.pop(task, None)
        self._since.pop(task, None)
        self._parked.discard(task)

    def _end(self, job: ProbeJob, on_done: OnDone) -> None:
        ended = self._ended.get(on_done)
        if ended is None:
            if not self._ended:
                assert self._loop is not None
                self._loop.call_soon(self._hand_over)
            ended = self._ended[on_done] = []
        ended.append(job)

    def _hand_over(self) -> None:
        ended, self._ended = self._ended, {}
        count = 0
        for on_done, jobs in ended.items():
            count += len(jobs)
            try:
                on_done(jobs)
            except Exception:
                log.exception("%s: completion callback failed", self._name)
        with self._cond:
            self._pending -= count
            self._cond.notify_all()

    # -- waiting and cancelling --------------------------------------------

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait until no job is pending; False if *timeout* ran out first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def wait_below(self, count: int, timeout: float | None) -> bool:
        """Wait until fewer than *count* jobs are ``busy``; False if *timeout* ran out first."""
        with self._cond:
            return self._cond.wait_for(lambda: self.busy < count, timeout)

    def cancel(self, *, started_too: bool = False) -> None:
        """Cancel jobs still waiting for a slot (and, if asked, running ones)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(self._cancel(started_too), loop)
        try:
            future.result(5)
        except (FutureTimeout, RuntimeError):
            log.warning("%s: could not cancel jobs", self._name)

    async def _cancel(self, started_too: bool) -> None:
        waiting, self._queue = self._queue, deque()
        for job, on_done in waiting:
            job.cancelled = True
            self._end(job, on_done)
        if started_too:
            for task in self._running:
                task.cancel()


# The process's loops for ad-hoc checks, by (config, concurrency). One in a
# server; tests build apps with several settings, so a few are kept and the
# least recently used beyond that is closed rather than left to leak.
_SHARED_LIMIT = 4
_shared: OrderedDict[tuple[ProbeConfig, int], ProbeLoop] = OrderedDict()
_shared_lock = threading.Lock()


def shared_probe_loop(config: ProbeConfig, concurrency: int) -> ProbeLoop:
    """The process's loop for ad-hoc checks (the API's "test now"), started lazily."""
    key = (config, concurrency)
    with _shared_lock:
        loop = _shared.get(key)
        if loop is None:
            loop = _shared[key] = ProbeLoop(config, concurrency=concurrency, name="adhoc-probes")
        _shared.move_to_end(key)
        evicted = [_shared.popitem(last=False)[1] for _ in range(len(_shared) - _SHARED_LIMIT)]
    for old in evicted:
        old.close()
    return loop


def close_shared_probe_loops(timeout: float = 5.0) -> None:
    """Close the ad-hoc loops (their HTTP sessions too); the next use starts afresh."""
    with _shared_lock:
        loops = list(_shared.values())
        _shared.clear()
    for loop in loops:
        loop.close(timeout)


# Whoever embeds the app without the daemon still gets the sessions closed
# before the interpreter tears down (aiohttp warns about unclosed ones).
atexit.register(close_shared_probe_loops)
