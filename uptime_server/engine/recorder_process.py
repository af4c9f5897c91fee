"""The recorder in a child process, so database work does not share the probe loop's GIL.

In one Python process the probe loop and the writer take turns on one core:
the recorder's statement building and row handling cost as much CPU as the
checks themselves. ``RecorderProcess`` has the same ``record`` (and
``push_forward``) as ``Recorder`` and ``Dispatcher``, and the ping path's
``record_pings`` (engine/pings.py), but sends each batch over a pipe to a
child process that writes it and answers with the results.
The writer thread waits on the pipe without holding the GIL, so the probe loop
runs on while the child writes on the other core. Batching, retries and
flushing stay the writer's; a child that dies is started again on the next
batch, and the batch it was writing is retried like any failed write.

The child is the engine's "database worker": each of its two threads holds a
connection for its life, through a ``db_outages.Link``. When the database
drops it (a PostgreSQL restart, a failover, a terminated backend), the work
in hand is tried once more on a new connection; when there is no database to
connect to, the child answers ``unavailable`` (and logs nothing: the engine
process logs one line per outage) and opens a new connection for the next
request, which the writer and the scheduler send again after a backoff. Every
answer also says how many connections the child had to open again
(``uptime_engine_db_reconnects_total``).

The child makes the scheduler's claims too (``claim``, the dispatcher's
``claim_elsewhere``), over a second pipe served by a thread of its own, so a
claim never waits behind a batch being written (only, on SQLite, for the
database's write lock, as it would in the parent). The parent unpickles the
``Claim`` objects: ~5 µs a check against ~30 µs for the query, its rows and
the check specs in the engine process's GIL.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing
import signal
import sys
import threading
import types
from collections.abc import Iterator
from datetime import datetime
from multiprocessing.connection import Connection
from typing import Any

from uptime_server.config import Settings
from uptime_server.db_outages import DatabaseUnavailable, Link, describe, unavailable
from uptime_server.engine import counters
from uptime_server.engine.dispatcher import Claim, ClaimRequest, Dispatcher
from uptime_server.engine.outcomes import CheckOutcome, PingFacts, Recorded
from uptime_server.engine.pings import PingIn

log = logging.getLogger(__name__)


class RecorderProcessError(RuntimeError):
    """The child could not write a batch (it has logged why) or has died."""


class WorkerUnavailable(RecorderProcessError, DatabaseUnavailable):
    """The child found the database unavailable (its first line in the message)."""


class RecorderProcess:
    remote = True  # the writer's thread needs no connection of its own (writer.Records)

    def __init__(
        self, settings: Settings, *, location: str | None = None, claims: bool = True
    ) -> None:
        """*claims*: the child makes claims too (``claim``), on a pipe and thread of
        their own; a caller that only records (heartbeat pings) goes without."""
        self.settings = settings
        self.location = location
        self.claims = claims
        self._lock = threading.Lock()  # the child's life: starting, resetting, closing
        # One exchange at a time per pipe; the two pipes are independent.
        self._record_lock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None  # record, record_quietly, push_forward
        self._claims_conn: Connection | None = None  # claim
        self._closed = False

    def start(self) -> None:
        """Start the child now (it takes a moment to import), not on the first batch."""
        with self._lock:
            self._ensure()

    def record(self, outcomes: list[CheckOutcome], *, now: datetime) -> list[Recorded]:
        return self._call("record", pack(outcomes), now)

    def record_quietly(self, outcomes: list[CheckOutcome], *, now: datetime) -> None:
        """``record`` for a caller that needs only to know the batch is committed."""
        self._call("record_quietly", pack(outcomes), now)

    def record_pings(self, pings: list[PingIn], *, now: datetime) -> list[str]:
        """``engine.pings.record_pings`` in the child: the batch's lookup, outcomes and commit."""
        return self._call("record_pings", pings, now)

    def push_forward(self, claims: list[Claim], now: datetime) -> None:
        self._call("push_forward", list(claims), now)

    def claim(self, request: ClaimRequest) -> list[Claim]:
        """``Dispatcher.claim_now(request)`` in the child; the claims it made."""
        if not self.claims:
            raise RuntimeError("this recorder process was started without claims")
        with self._claim_lock:
            return self._exchange(1, request)

    def close(self, timeout: float = 10.0) -> None:
        """Let the child finish the request in hand and end, for at most *timeout* seconds.

        Past that it is killed (it ignores SIGTERM, see ``serve``): what it was
        writing is rolled back, and its checks run again when their leases
        expire. A closed recorder process starts no new child.
        """
        with self._lock:
            self._closed = True
            for conn in (self._conn, self._claims_conn):
                if conn is not None:
                    with contextlib.suppress(OSError):
                        conn.send(None)
            if self._process is not None:
                self._process.join(timeout)
                if self._process.is_alive():
                    log.warning("the recorder process did not end in %ss; killed", timeout)
                    self._process.kill()
                    self._process.join(5)
            self._reset()

    def _call(self, kind: str, payload: Any, now: datetime) -> Any:
        with self._record_lock:
            return self._exchange(0, (kind, payload, now))

    def _exchange(self, pipe: int, message: Any) -> Any:
        """Send *message* on pipe 0 (records) or 1 (claims) and return the answer."""
        with self._lock:
            conns = self._ensure()
        conn = conns[pipe]
        assert conn is not None  # claim() refuses when there is no claims pipe
        try:
            conn.send(message)
            status, value, reconnects = conn.recv()
        except (EOFError, OSError) as exc:
            with self._lock:
                if conn is self._conn or conn is self._claims_conn:
                    # Not if the other pipe's caller has started a new child meanwhile.
                    self._reset()
            raise RecorderProcessError("the recorder process died") from exc
        if reconnects:
            counters.record_db_reconnects(reconnects)
        if status == "unavailable":
            raise WorkerUnavailable(value)
        if status != "ok":
            raise RecorderProcessError(f"the recorder process failed: {value}")
        return value

    def _ensure(self) -> tuple[Connection, Connection | None]:
        """The pipes to a live child, starting one if needed (the caller holds _lock)."""
        if self._closed:
            raise RecorderProcessError("the recorder process is closed")
        if (
            self._conn is None
            or (self.claims and self._claims_conn is None)
            or self._process is None
            or not self._process.is_alive()
        ):
            self._reset()
            # spawn, not fork: the parent has threads (and maybe open sockets).
            context = multiprocessing.get_context("spawn")
            parent, child = context.Pipe()
            claims_parent, claims_child = context.Pipe() if self.claims else (None, None)
            self._process = context.Process(
                target=serve,
                args=(self.settings, self.location, child, claims_child),
                name="uptime-recorder",
                daemon=True,
            )
            with _main_module_hidden():
                self._process.start()
            child.close()
            if claims_child is not None:
                claims_child.close()
            self._conn, self._claims_conn = parent, claims_parent
        return self._conn, self._claims_conn

    def _reset(self) -> None:
        # Closing our ends ends the child too (it reads EOF on both pipes).
        for conn in (self._conn, self._claims_conn):
            if conn is not None:
                conn.close()
        self._conn = self._claims_conn = None
        self._process = None


# Outcomes cross the pipe as plain tuples: pickling a dataclass (by its
# __reduce_ex__, field by field) cost the sending process more than building it.
_OUTCOME_FIELDS = tuple(f.name for f in dataclasses.fields(CheckOutcome))
_PING_FIELDS = tuple(f.name for f in dataclasses.fields(PingFacts))
_PING_AT = _OUTCOME_FIELDS.index("ping")


def pack(outcomes: list[CheckOutcome]) -> list[tuple[Any, ...]]:
    packed = []
    for outcome in outcomes:
        values = [getattr(outcome, name) for name in _OUTCOME_FIELDS]
        ping = values[_PING_AT]
        if ping is not None:
            values[_PING_AT] = tuple(getattr(ping, name) for name in _PING_FIELDS)
        packed.append(tuple(values))
    return packed


def unpack(packed: list[tuple[Any, ...]]) -> list[CheckOutcome]:
    outcomes = []
    for values in packed:
        fields = dict(zip(_OUTCOME_FIELDS, values, strict=True))
        if fields["ping"] is not None:
            fields["ping"] = PingFacts(**dict(zip(_PING_FIELDS, fields["ping"], strict=True)))
        outcomes.append(CheckOutcome(**fields))
    return outcomes


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Spawn the child without importing the parent's ``__main__`` in it.

    ``spawn`` imports the parent's main module in the child (the ``uptime``
    CLI, a bench script), and with it Flask, aiohttp and the rest: ~35 MB of
    the child's memory for code it never runs. The child needs only ``serve``
    and what the recorder imports, so for the moment of the start the parent's
    main module is a blank one.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def serve(
    settings: Settings,
    location: str | None,
    conn: Connection,
    claims_conn: Connection | None = None,
) -> None:
    """The child: write what arrives until the pipe closes or says stop.

    Claims that arrive on *claims_conn* are made by a thread of their own, on
    its own database connection, while batches are written.
    """
    from uptime_server import gc_policy
    from uptime_server.db import bind
    from uptime_server.engine.pings import record_pings
    from uptime_server.engine.recorder import Recorder

    # The parent decides when this process ends (pipe closed or a stop
    # message): a SIGTERM or Ctrl-C sent to the whole process group must not
    # kill it before the parent's final flush.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    bind(settings.database_url)
    recorder = Recorder(settings)
    dispatcher = Dispatcher(settings, location=location)
    gc_policy.apply(settings.gc_threshold)
    if claims_conn is not None:
        threading.Thread(
            target=_serve_claims,
            args=(Dispatcher(settings), claims_conn),
            name="claims",
            daemon=True,
        ).start()

    def write(kind: str, payload: Any, now: datetime) -> Any:
        if kind == "record_pings":
            return record_pings(recorder, payload, now=now)
        if kind == "record":
            return recorder.record(unpack(payload), now=now)
        if kind == "record_quietly":
            recorder.record(unpack(payload), now=now)
            return None
        return dispatcher.push_forward(payload, now)

    link = Link()
    try:
        for kind, payload, now in _requests(conn):
            _answer(conn, link, "writing a batch", write, kind, payload, now)
    finally:
        link.close()


def _serve_claims(dispatcher: Dispatcher, conn: Connection) -> None:
    """The child's claim thread: make each requested claim and send the claims back."""
    link = Link()  # its own connection, held between claims as the writer's is
    try:
        for request in _requests(conn):
            _answer(conn, link, "a claim", dispatcher.claim_now, request)
    finally:
        link.close()


def _answer(conn: Connection, link: Link, what: str, work: Any, *args: Any) -> None:
    """Do *work* through *link* and send its answer: ok, unavailable or error.

    The parent tries again either way (the writer its batch, the scheduler's
    next loop its claim); an unavailable database is the parent's to log.
    """
    try:
        answer: tuple[str, Any] = ("ok", link.run(work, *args))
    except Exception as exc:
        if unavailable(exc):
            answer = ("unavailable", describe(exc))
        else:
            log.exception("recorder process: %s failed", what)
            answer = ("error", repr(exc))
    with contextlib.suppress(OSError):
        conn.send((*answer, link.take_reconnects()))


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
