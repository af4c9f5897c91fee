"""The one writer thread: finished runs → batched ``Recorder.record`` transactions.

Runs arrive from the probe loop through a queue, in lists (all the runs that
ended in one turn of the probe loop). The writer takes what is queued, up to
``max_batch`` items, and waits at most ``max_wait`` seconds
for a batch to fill, so one transaction carries many runs under load and a
lone run is written within a fraction of a second when idle. A batch that
cannot be written (database down) is kept and retried with backoff
(``db.outages.backoff``: at most a few seconds between tries, so writing
resumes within seconds of the database's return); results are never dropped
silently: the writer retries until the database is back, and only what is
still unwritten when shutdown gives up waiting is dropped, with an error in
the log. Retrying a batch never writes a run twice: the recorder writes a run
only while its claim holds the check's lease, and the transaction that wrote
it gave the lease back. Its claims keep their leases meanwhile (the scheduler
renews them as soon as the database answers, before it claims anything).

An unavailable database is logged once per outage (``db.outages.OUTAGES``),
not with a traceback per try; ``unavailable_since`` says since when the
writer has been failing so (/healthz), ``last_written_at`` when it last wrote.
Writing in this process (``engine.worker.InProcess``: tests, cron mode), the
thread holds one connection for its life through a ``db.outages.Link``;
through a ``DatabaseWorker``, none.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from uptime_server.checks.outcomes import CheckOutcome, Recorded
from uptime_server.clock import Clock
from uptime_server.db.outages import OUTAGES, Link, backoff, unavailable
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import Claim

log = logging.getLogger(__name__)

MAX_BATCH = 500
MAX_WAIT = 0.15  # seconds a batch may wait to fill
FILL_POLL = 0.05  # seconds between looks at the queue while a batch fills


# A run to record, or a claim whose run failed on our side: give its lease
# back, due at its next slot (``Dispatcher.push_forward``).
Item = CheckOutcome | Claim
_STOP = object()
_WAKE = object()  # ends a batch's wait at once (a flush is waiting)


class Records(Protocol):
    """Where finished runs are written: ``engine.worker``'s ``InProcess`` (here) or
    ``DatabaseWorker`` (in its child; ``remote``: the calling thread then needs
    no connection of its own). Whoever it is given to starts and closes it."""

    remote: bool

    def start(self) -> None: ...

    def close(self, timeout: float = ...) -> None: ...

    def record(
        self, outcomes: list[CheckOutcome], now: datetime, want_results: bool = False
    ) -> list[Recorded] | None: ...

    def push_forward(self, claims: list[Claim], now: datetime) -> None: ...


class ResultWriter:
    def __init__(
        self,
        records: Records,
        clock: Clock,
        *,
        on_recorded: Callable[[Sequence[Recorded]], None] | None = None,
        on_written: Callable[[list[Item]], None] | None = None,
        max_batch: int = MAX_BATCH,
        max_wait: float = MAX_WAIT,
        name: str = "writer",
    ) -> None:
        self.records = records
        self.clock = clock
        # Unless someone reads what was recorded, the database worker need not
        # send it back (the writer would unpickle a ``Recorded`` per run).
        self._on_recorded = on_recorded
        self._on_written = on_written  # after each batch, written or given up on
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.name = name
        self._queue: queue.Queue[object] = queue.Queue()
        self._cond = threading.Condition()
        self._put = 0
        self._done = 0
        self._urgent = threading.Event()  # a flush or stop is waiting: don't linger
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._link = None if records.remote else Link()
        self.recorded = 0  # runs written so far
        self.dropped = 0
        self.last_written_at: datetime | None = None  # the clock's time of the last batch written
        self.unavailable_since: datetime | None = None  # failing on an unavailable database

    def start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    @property
    def backlog(self) -> int:
        return self._put - self._done

    def put(self, item: Item) -> None:
        self.put_many([item])

    def put_many(self, items: list[Item]) -> None:
        """Queue many results with one hand-off (the writer wakes once, not per item)."""
        if not items:
            return
        self.start()
        with self._cond:
            self._put += len(items)
        self._queue.put(items)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything put so far is written (or given up on)."""
        with self._cond:
            target = self._put
            if self._done >= target:
                return True
            self._urgent.set()
            self._queue.put(_WAKE)
            return self._cond.wait_for(lambda: self._done >= target, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Write what is queued (trying for at most *timeout* seconds), then end the thread."""
        if self._thread is None:
            return
        deadline = time.monotonic() + timeout
        self._urgent.set()
        self._queue.put(_STOP)
        self._thread.join(max(0.0, timeout - min(0.5, timeout / 4)))
        if self._thread.is_alive():
            self._stopped.set()  # abandon retries; the thread logs what it drops
            # A write in hand is not waited for past the deadline: the thread is
            # a daemon, and the batch's leases expire.
            self._thread.join(max(0.0, deadline - time.monotonic()))
        self._thread = None

    # -- the thread --------------------------------------------------------

    def _run(self) -> None:
        try:
            self._work()
        finally:
            if self._link is not None:
                self._link.close()

    def _work(self) -> None:
        stopping = False
        while not stopping:
            batch, stopping = self._collect()
            if batch:
                self._write(batch)
                if self._on_written is not None:
                    self._on_written(batch)
            with self._cond:
                self._done += len(batch)
                if self._done >= self._put:
                    self._urgent.clear()
                self._cond.notify_all()

    def _collect(self) -> tuple[list[Item], bool]:
        """The next batch, and whether a stop was asked for.

        Waits as long as it takes for the first results; the rest of the
        batch is what arrives within ``max_wait``, taken from the queue every
        ``FILL_POLL`` seconds rather than as each list arrives: a wake-up per
        probe-loop turn (hundreds a second) would take the GIL from the probe
        loop as often. A flush or stop ends the wait at once.
        """
        batch: list[Item] = []
        first = self._queue.get()
        if first is _STOP:
            return batch, True
        if first is not _WAKE:
            batch.extend(first)  # type: ignore[call-overload]
        deadline = time.monotonic() + self.max_wait
        while True:
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    return batch, True
                if item is not _WAKE:
                    # Whole lists: a batch may exceed max_batch by one list's length.
                    batch.extend(item)  # type: ignore[call-overload]
            left = deadline - time.monotonic()
            if len(batch) >= self.max_batch or self._urgent.is_set() or left <= 0:
                return batch, False
            self._urgent.wait(min(left, FILL_POLL))

    def _write(self, batch: list[Item]) -> None:
        outcomes = [i for i in batch if isinstance(i, CheckOutcome)]
        forward = [i for i in batch if isinstance(i, Claim)]
        for attempt in itertools.count():
            try:
                if outcomes:
                    self._call(self._record, outcomes)
                    self.recorded += len(outcomes)
                    outcomes = []
                if forward:
                    self._call(self.records.push_forward, forward, self.clock.now())
                self._written_now()
                return
            except Exception as exc:  # keep the batch and try again
                self._failed(exc, len(outcomes) + len(forward))
            if self._stopped.wait(backoff(attempt)):
                break
        self.dropped += len(outcomes) + len(forward)
        log.error(
            "%s: gave up writing %d check results and %d schedule updates at shutdown; "
            "their monitors are checked again when their leases expire",
            self.name,
            len(outcomes),
            len(forward),
        )

    def _call(self, work: Callable[..., object], *args: object) -> None:
        # In this process: on the thread's connection, opened again if it died.
        if self._link is not None:
            self._link.run(work, *args)
        else:
            work(*args)

    def _record(self, outcomes: list[CheckOutcome]) -> None:
        if self._on_recorded is None:
            self.records.record(outcomes, self.clock.now())
            return
        done = self.records.record(outcomes, self.clock.now(), want_results=True)
        self._on_recorded(done or [])

    def _written_now(self) -> None:
        self.last_written_at = now = self.clock.now()
        self.unavailable_since = None
        counters.record_write(now)
        OUTAGES.recovered()

    def _failed(self, exc: Exception, items: int) -> None:
        if unavailable(exc):
            OUTAGES.failed(exc, self.name)  # one line per outage, not one per try
            if self.unavailable_since is None:
                self.unavailable_since = self.clock.now()
        elif self._stopped.is_set():  # shutdown gave up waiting and ended the database worker
            log.warning("%s: writing %d results failed at shutdown: %s", self.name, items, exc)
        else:
            log.exception("%s: writing %d results failed", self.name, items)
