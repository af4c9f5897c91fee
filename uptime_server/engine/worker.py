"""The engine's database work, in a child process (``DatabaseWorker``) or here (``InProcess``).

The work is four requests, one method each:

- ``claim(request)``: the dispatcher's claim transaction (``Dispatcher.claim_now``);
  the scheduler names the batch and the rows to take, and gets the ``Claim`` back;
- ``record(outcomes, now, want_results=False)``: the recorder's transaction for
  a batch of finished runs (``Recorder.record``); what it did with each run
  only for a caller that asks;
- ``record_pings(pings, now)``: a batch of heartbeat pings looked up, turned
  into outcomes and recorded (``heartbeats.batch.record_pings``), an answer each;
- ``push_forward(claims, now)``: claims whose run failed on our side, given
  back due at their next slot (``Dispatcher.push_forward``).

``InProcess`` does them on the calling thread's connection (tests, cron mode,
a ping writer without a child, and the worker's child itself). The daemon uses
a ``DatabaseWorker``: the same methods, each sent to a child process that runs
them with an ``InProcess`` of its own. In one Python process the probe loop
and the database work take turns on one GIL, and the recorder's statement
building and row handling cost as much CPU as the checks themselves
(bench/README.md#second-pass-the-engine-processs-own-cpu-2026-11-24-afternoon);
the parent's calling thread waits on a pipe without holding the GIL, so the
probe loop runs on while the child works on the other core.

Transport: each method sends one small typed request (a ``NamedTuple`` whose
fields are the method's arguments) by pickle over a pipe; the child finds the
handler by the request's type. Claims have a pipe and a child thread of their
own, each with its own database connection, so a claim never waits behind a
batch being written (only, on SQLite, for the database's write lock, as it
would in the parent). A caller that makes no claims (the heartbeat ping writer)
starts the worker with ``claims=False`` and the child has no such thread.

Outages: each child thread holds its connection for its life through a
``db.outages.Link``. When the database drops it (a PostgreSQL restart, a
failover, a terminated backend), the request in hand is tried once more on a
new connection; when there is no database to connect to, the child answers
``WorkerUnavailable`` (and logs nothing: the engine process logs one line per
outage) and opens a new connection for the next request, which the writer and
the scheduler send again after a backoff. Every answer also says how many
connections the child had to open again (``uptime_engine_db_reconnects_total``).
A child that dies is started again on the next request; the request it was
serving fails with ``WorkerError`` and is retried like any failed write.

Memory: the child is spawned (the parent has threads and sockets, which a fork
would copy mid-use), and a spawned child imports this module and what it
imports, plus the parent's ``__main__`` unless hidden (``_main_module_hidden``).
So this module and everything it imports keep Flask, pydantic, aiohttp and
cryptography out (tests/engine/test_worker.py checks the child's real imports;
what that saves: bench/README.md#the-database-worker-issue-30-item-7).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

from uptime_server import gc_policy
from uptime_server.checks.outcomes import CheckOutcome, Recorded
from uptime_server.config import Settings
from uptime_server.db import bind
from uptime_server.db.outages import DatabaseUnavailable, Link, describe, unavailable
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import Claim, ClaimRequest, Dispatcher
from uptime_server.engine.recorder import Recorder
from uptime_server.heartbeats.batch import PingIn, record_pings

log = logging.getLogger(__name__)


class WorkerError(RuntimeError):
    """The child could not do the work (it has logged why) or has died."""


class WorkerUnavailable(WorkerError, DatabaseUnavailable):
    """The child found the database unavailable (its first line in the message)."""


class InProcess:
    """The database work on the calling thread's connection (see the module doc).

    ``remote`` is False: a thread that calls it for long (the writer, the ping
    writer) holds a connection for it through a ``db.outages.Link``.
    """

    remote = False

    def __init__(self, settings: Settings, *, recorder: Recorder | None = None) -> None:
        self.recorder = Recorder(settings) if recorder is None else recorder
        self.dispatcher = Dispatcher(settings)

    def start(self) -> None:
        """Nothing to start (the ``Records`` protocol: a ``DatabaseWorker`` starts its child)."""

    def close(self, timeout: float = 10.0) -> None:
        """Nothing to close."""

    def claim(self, request: ClaimRequest) -> list[Claim]:
        return self.dispatcher.claim_now(request)

    def record(
        self, outcomes: list[CheckOutcome], now: datetime, want_results: bool = False
    ) -> list[Recorded] | None:
        done = self.recorder.record(outcomes, now=now)
        return done if want_results else None

    def record_pings(self, pings: list[PingIn], now: datetime) -> list[str]:
        return record_pings(self.recorder, pings, now=now)

    def push_forward(self, claims: list[Claim], now: datetime) -> None:
        self.dispatcher.push_forward(claims, now)


# The requests, one per method; their fields are the method's arguments.


class _Claim(NamedTuple):
    request: ClaimRequest


class _Record(NamedTuple):
    outcomes: list[CheckOutcome]
    now: datetime
    want_results: bool


class _RecordPings(NamedTuple):
    pings: list[PingIn]
    now: datetime


class _PushForward(NamedTuple):
    claims: list[Claim]
    now: datetime


class _Answer(NamedTuple):
    value: Any
    failure: WorkerError | None  # raised in the parent
    reconnects: int


class _Pipe:
    """One pipe to the child: one request at a time on it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conn: Connection | None = None


class DatabaseWorker:
    """``InProcess``'s methods, each run in a child process (see the module doc)."""

    remote = True  # the writer's thread needs no connection of its own

    def __init__(self, settings: Settings, *, claims: bool = True) -> None:
        """*claims*: the child makes claims too, on a pipe and thread of their own;
        a caller that only records (heartbeat pings) goes without."""
        self.settings = settings
        self.claims = claims
        self._lock = threading.Lock()  # the child's life: starting, resetting, closing
        self._records = _Pipe()  # record, record_pings, push_forward
        self._claims = _Pipe()  # claim; the two pipes are independent
        self._process: Any = None
        self._closed = False

    def start(self) -> None:
        """Start the child now (it takes a moment to import), not on the first request."""
        with self._lock:
            self._ensure()

    def claim(self, request: ClaimRequest) -> list[Claim]:
        """``Dispatcher.claim_now(request)`` in the child; the claims it made."""
        if not self.claims:
            raise RuntimeError("this database worker was started without claims")
        claims: list[Claim] = self._ask(self._claims, _Claim(request))
        return claims

    def record(
        self, outcomes: list[CheckOutcome], now: datetime, want_results: bool = False
    ) -> list[Recorded] | None:
        """``Recorder.record`` in the child. Without *want_results* nothing is sent
        back but that the batch is committed (a ``Recorded`` per run costs the
        caller its unpickling)."""
        done: list[Recorded] | None = self._ask(self._records, _Record(outcomes, now, want_results))
        return done

    def record_pings(self, pings: list[PingIn], now: datetime) -> list[str]:
        """``heartbeats.batch.record_pings`` in the child: lookup, outcomes and commit."""
        answers: list[str] = self._ask(self._records, _RecordPings(pings, now))
        return answers

    def push_forward(self, claims: list[Claim], now: datetime) -> None:
        self._ask(self._records, _PushForward(list(claims), now))

    def close(self, timeout: float = 10.0) -> None:
        """Let the child finish the request in hand and end, for at most *timeout* seconds.

        Past that it is killed (it ignores SIGTERM, see ``serve``): what it was
        writing is rolled back, and its checks run again when their leases
        expire. A closed worker starts no new child.
        """
        with self._lock:
            self._closed = True
            for pipe in (self._records, self._claims):
                if pipe.conn is not None:
                    with contextlib.suppress(OSError):
                        pipe.conn.send(None)
            if self._process is not None:
                self._process.join(timeout)
                if self._process.is_alive():
                    log.warning("the database worker did not end in %ss; killed", timeout)
                    self._process.kill()
                    self._process.join(5)
            self._reset()

    @property
    def pid(self) -> int | None:
        """The child's process id, while there is one."""
        return self._process.pid if self._process is not None else None

    def _ask(self, pipe: _Pipe, request: tuple[Any, ...]) -> Any:
        """Send *request* on *pipe* and return the child's answer (or raise its failure)."""
        with pipe.lock:
            with self._lock:
                self._ensure()
            conn = pipe.conn
            assert conn is not None  # claim() refuses when there is no claims pipe
            try:
                conn.send(request)
                answer: _Answer = conn.recv()
            except (EOFError, OSError) as exc:
                with self._lock:
                    if conn is pipe.conn:
                        # Not if the other pipe's caller has started a new child meanwhile.
                        self._reset()
                raise WorkerError("the database worker died") from exc
        if answer.reconnects:
            counters.record_db_reconnects(answer.reconnects)
        if answer.failure is not None:
            raise answer.failure
        return answer.value

    def _ensure(self) -> None:
        """A live child and its pipes, starting one if needed (the caller holds _lock)."""
        if self._closed:
            raise WorkerError("the database worker is closed")
        if (
            self._records.conn is None
            or (self.claims and self._claims.conn is None)
            or self._process is None
            or not self._process.is_alive()
        ):
            self._reset()
            # spawn, not fork: the parent has threads (and maybe open sockets).
            context = multiprocessing.get_context("spawn")
            records, records_child = context.Pipe()
            claims, claims_child = context.Pipe() if self.claims else (None, None)
            self._process = context.Process(
                target=serve,
                args=(self.settings, records_child, claims_child),
                name="uptime-database-worker",
                daemon=True,
            )
            with _main_module_hidden():
                self._process.start()
            records_child.close()
            if claims_child is not None:
                claims_child.close()
            self._records.conn, self._claims.conn = records, claims

    def _reset(self) -> None:
        # Closing our ends ends the child too (it reads EOF on both pipes).
        for pipe in (self._records, self._claims):
            if pipe.conn is not None:
                pipe.conn.close()
            pipe.conn = None
        self._process = None


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Spawn the child without importing the parent's ``__main__`` in it.

    ``spawn`` imports the parent's main module in the child (the ``uptime``
    CLI, a bench script), and with it Flask, aiohttp and the rest: memory for
    code the child never runs. The child needs only ``serve`` and what this
    module imports, so for the moment of the start the parent's main module is
    a blank one.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


# -- the child ------------------------------------------------------------------

Handlers = Mapping[type, Callable[..., Any]]


def serve(settings: Settings, conn: Connection, claims_conn: Connection | None = None) -> None:
    """The child: do what arrives until the pipes close or say stop.

    Claims that arrive on *claims_conn* are made by a thread of their own, on
    its own database connection, while batches are written.
    """
    # The parent decides when this process ends (pipe closed or a stop
    # message): a SIGTERM or Ctrl-C sent to the whole process group must not
    # kill it before the parent's final flush.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    bind(settings.database_url)
    work = InProcess(settings)
    gc_policy.apply(settings.gc_threshold)
    if claims_conn is not None:
        threading.Thread(
            target=_serve,
            args=(claims_conn, {_Claim: work.claim}),
            name="claims",
            daemon=True,
        ).start()
    handlers: Handlers = {
        _Record: work.record,
        _RecordPings: work.record_pings,
        _PushForward: work.push_forward,
    }
    _serve(conn, handlers)


def _serve(conn: Connection, handlers: Handlers) -> None:
    """Answer each request on *conn* with its handler, on one connection held throughout."""
    link = Link()
    try:
        for request in _requests(conn):
            answer = _answer(link, handlers[type(request)], request)
            with contextlib.suppress(OSError):
                conn.send(answer)
    finally:
        link.close()


def _answer(link: Link, handler: Callable[..., Any], request: tuple[Any, ...]) -> _Answer:
    """``handler(*request)`` through *link*: its value, or why it failed.

    The parent tries again either way (the writer its batch, the scheduler's
    next loop its claim); an unavailable database is the parent's to log.
    """
    value, failure = None, None
    try:
        value = link.run(handler, *request)
    except Exception as exc:
        if unavailable(exc):
            failure = WorkerUnavailable(describe(exc))
        else:
            log.exception("database worker: %s failed", type(request).__name__.strip("_"))
            failure = WorkerError(f"the database worker failed: {exc!r}")
    return _Answer(value, failure, link.take_reconnects())


def _requests(conn: Connection) -> Iterator[Any]:
    """What the parent sends on *conn*, until it closes its end or sends None."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        yield message
