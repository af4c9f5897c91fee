"""An asyncio loop in its own thread, running checks through one shared Prober.

Other threads submit checks; each waits for a slot of an ``asyncio.Semaphore``
(the process's ``check_concurrency``), then runs with the one Prober of this
loop, whose TLS contexts and HTTP session are built once. A job's callback
runs on the loop thread when the job ends, whether it passed, failed, raised
(a bug in our code: ``job.error``) or was cancelled before it started.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from uptime_server.engine.clock import Clock
from uptime_server.engine.probe import CheckSpec, ProbeConfig, Prober, RunResult, Sleep
from uptime_server.engine.spec import run_budget

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ProbeJob:
    spec: CheckSpec
    key: Any = None
    started_at: datetime | None = None  # wall clock when a slot was granted
    result: RunResult | None = None
    error: BaseException | None = None
    cancelled: bool = False
    _task: asyncio.Task[None] | None = field(default=None, repr=False)


class ProbeLoop:
    """Owns the thread, the event loop, the semaphore and the Prober."""

    def __init__(
        self,
        config: ProbeConfig,
        *,
        concurrency: int,
        clock: Clock | None = None,
        sleep: Sleep = asyncio.sleep,
        prober: Prober | None = None,
        name: str = "probes",
    ) -> None:
        self.clock = clock or Clock()
        self.prober = prober or Prober(config)
        self._sleep = sleep
        self._concurrency = concurrency
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._jobs: set[ProbeJob] = set()  # touched on the loop thread only
        self._pending = 0
        self._cond = threading.Condition()
        self._start_lock = threading.Lock()

    # -- life cycle --------------------------------------------------------

    def start(self) -> None:
        with self._start_lock:
            if self._loop is not None:
                return
            loop = asyncio.new_event_loop()
            self._semaphore = asyncio.Semaphore(self._concurrency)
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

    def submit(self, jobs: Iterable[ProbeJob], on_done: Callable[[ProbeJob], None]) -> None:
        batch = list(jobs)
        if not batch:
            return
        self.start()
        assert self._loop is not None
        with self._cond:
            self._pending += len(batch)
        self._loop.call_soon_threadsafe(self._spawn, batch, on_done)

    def run_sync(self, spec: CheckSpec, timeout: float | None = None) -> ProbeJob:
        """Run one check now and wait for it (the API's "test" endpoint)."""
        self.start()
        assert self._loop is not None
        done = threading.Event()
        job = ProbeJob(spec)
        with self._cond:
            self._pending += 1
        self._loop.call_soon_threadsafe(self._spawn, [job], lambda _job: done.set())
        limit = timeout if timeout is not None else run_budget(spec) + 30
        if not done.wait(limit):
            raise TimeoutError(f"check did not finish within {limit:.0f}s")
        return job

    def _spawn(self, batch: list[ProbeJob], on_done: Callable[[ProbeJob], None]) -> None:
        for job in batch:
            self._jobs.add(job)
            job._task = asyncio.ensure_future(self._run(job, on_done))

    async def _run(self, job: ProbeJob, on_done: Callable[[ProbeJob], None]) -> None:
        assert self._semaphore is not None
        try:
            async with self._semaphore:
                job.started_at = self.clock.now()
                job.result = await self.prober.run(job.spec, sleep=self._sleep)
        except asyncio.CancelledError:
            job.cancelled = True
        except Exception as exc:  # noqa: BLE001 - a bug in one check is that check's problem
            job.error = exc
        finally:
            self._jobs.discard(job)
            try:
                on_done(job)
            except Exception:  # noqa: BLE001
                log.exception("%s: completion callback failed", self._name)
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    # -- waiting and cancelling --------------------------------------------

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait until no job is pending; False if *timeout* ran out first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def wait_below(self, count: int, timeout: float | None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._pending < count, timeout)

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
        for job in list(self._jobs):
            if job._task is not None and (started_too or job.started_at is None):
                job._task.cancel()


@functools.lru_cache(maxsize=4)
def shared_probe_loop(config: ProbeConfig, concurrency: int) -> ProbeLoop:
    """The process's loop for ad-hoc checks (the API's "test now"), started lazily."""
    return ProbeLoop(config, concurrency=concurrency, name="adhoc-probes")
