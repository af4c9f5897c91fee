"""Claims due checks of one location, and decides when each is due next.

Due times live in ``monitor_locations.next_check_at`` (one row per monitor and
location), so they survive restarts and are shared by every process on the
database.

Claim
    A claim takes up to ``limit`` rows of this process's location whose
    monitor is not paused and of a checked type, with ``next_check_at <= now``
    and no live lease (none, or ``lease_expires_at < now``), oldest due first.
    In one write transaction it selects them and sets ``lease_owner`` to a
    token unique to this claim batch (``<worker id>/<batch number>``) and
    ``lease_expires_at``. On PostgreSQL the select is ``FOR UPDATE OF
    monitor_locations SKIP LOCKED``, so concurrent claimers skip each other's
    rows instead of queueing on them; on SQLite the transaction is ``BEGIN
    IMMEDIATE``, which admits one writer at a time. The UPDATE repeats the
    "lease free" condition as a guard either way. Only the holder of the token
    may move the row's schedule on (the recorder's conditional update).

    Where the claim runs: ``claim`` makes it in the calling process. The
    daemon's scheduler has it made by its ``Claims`` (``engine.worker``'s
    ``DatabaseWorker``): the dispatcher still names the batch (its token) and
    the rows to take (``next_request``, a ``ClaimRequest``); the worker's
    child runs the same transaction (``claim_now``) on its own core and sends
    back the ``Claim`` objects, so the engine process's GIL spends nothing on
    the query, its rows or the check specs built from them.

Lease
    ``UPTIME_LEASE_SECONDS`` (default 15 s), short whatever the check's worst
    case: like a queue's visibility timeout, the holder renews the leases of
    the checks it still holds (running, waiting to run, or waiting for the
    writer), all of them in one statement every third of a lease
    (``renew_leases``; the scheduler's loop calls it). A slow check is thus
    never run twice while its holder lives, and a process that dies holding
    claims loses them within one lease: another process (or its own restart)
    takes them over then, and only then. A renewal that finds a lease taken
    (it expired, another process claimed the check) reports that claim lost;
    its result is dropped, and the recorder would refuse it anyway.

Next due time (set when the run is recorded)
    Drift-free: ``due + interval``, where ``due`` is the claimed
    ``next_check_at`` — not the time the run started or ended, so dispatch lag
    and run time never accumulate into the schedule.

    Jitter: the first run after a monitor was created or resumed (its row has
    no ``last_status`` yet) adds a stable per-monitor offset, a fraction of
    ``min(interval, FIRST_SPREAD_CAP)`` taken from a hash of (monitor id,
    location). Monitors created together (a bulk import) thus spread over up
    to a minute instead of ticking in lockstep forever; from then on the
    drift-free rule keeps each on its own phase.

    Stall: when ``due + interval`` is already past when the run completes
    (suspend, clock jump, overload: at least one whole interval was missed),
    the missed slots are skipped, not replayed: the next due time is the first
    slot of the monitor's own phase (``due + k * interval``) that is at least
    half an interval after now. Each overdue monitor therefore runs once, the
    next run is at least half an interval later, and monitors keep their
    spread instead of all restarting at the same instant.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import secrets
import socket
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from uptime_server.checks.types import CheckSpec
from uptime_server.config import Settings
from uptime_server.db import (
    Prepared,
    database,
    locked,
    retry_locked,
    write_tx,
)
from uptime_server.engine import dispatcher_sql
from uptime_server.engine.spec import SPEC_FIELDS, check_spec
from uptime_server.models import CHECKED_TYPES, Monitor, MonitorLocation

log = logging.getLogger(__name__)

RENEW_CHUNK = 5000  # leases per renewal statement (SQLite's bound-parameter limit)
FIRST_SPREAD_CAP = 60  # seconds: the widest first-run offset
DEFAULT_BATCH = 500


def new_worker_id() -> str:
    """Unique per process and dispatcher: host, pid and a random tag (fits 64 chars)."""
    return f"{socket.gethostname()[:24]}-{os.getpid()}-{secrets.token_hex(4)}"


# Who holds one check's lease: (monitor id, location, lease owner token).
LeaseKey = tuple[int, str, str]


@dataclass(frozen=True)
class Claim:
    """One due check this process now holds the lease for."""

    row_id: int
    monitor_id: int
    monitor_created_at: datetime  # with monitor_id, which monitor this is (CheckOutcome)
    location: str
    due: datetime
    interval: int
    first: bool  # first run since created/resumed: gets the jitter offset
    lease_owner: str
    spec: CheckSpec | None  # None when the stored monitor cannot be probed
    spec_error: str | None = None

    @property
    def lease_key(self) -> LeaseKey:
        return (self.monitor_id, self.location, self.lease_owner)


@dataclass(frozen=True)
class ClaimRequest:
    """One claim to make: the rows of *location* and *types* due at *now*, under *token*."""

    location: str
    types: tuple[str, ...]
    now: datetime
    limit: int
    token: str  # the lease owner of this batch: ``<worker id>/<batch number>``


class Claims(Protocol):
    """Makes the claims a dispatcher names: ``engine.worker``'s ``InProcess`` (here)
    or ``DatabaseWorker`` (in its child)."""

    def claim(self, request: ClaimRequest) -> list[Claim]: ...


def first_offset(monitor_id: int, location: str, interval: int) -> timedelta:
    """A stable offset in [0, min(interval, FIRST_SPREAD_CAP)) for this monitor."""
    fraction = zlib.crc32(f"{monitor_id}:{location}".encode()) / 2**32
    return timedelta(seconds=round(fraction * min(interval, FIRST_SPREAD_CAP), 3))


def next_due(claim: Claim, now: datetime) -> datetime:
    """When the claimed check is due next, given it completed at *now* (see module doc)."""
    interval = timedelta(seconds=claim.interval)
    following = claim.due + interval
    if claim.first:
        following += first_offset(claim.monitor_id, claim.location, claim.interval)
    if following > now:
        return following
    earliest = now + interval / 2
    skipped = math.ceil((earliest - following) / interval)
    return following + skipped * interval


class Dispatcher:
    """Claims due checks for one location; one per scheduler (or cron run)."""

    def __init__(
        self,
        settings: Settings,
        *,
        location: str | None = None,
        worker_id: str | None = None,
        batch_size: int = DEFAULT_BATCH,
        types: Sequence[str] = CHECKED_TYPES,
    ) -> None:
        self.settings = settings
        # The monitor types this claimer runs: a probe agent runs no heartbeat
        # (its verdict reads the server's state), the server's scheduler all.
        self.types = tuple(types)
        self.location = location or settings.locations[0]
        self.worker_id = worker_id or new_worker_id()
        self.batch_size = batch_size
        self._batches = itertools.count(1)

    # -- claiming ----------------------------------------------------------

    def claim(self, now: datetime, limit: int | None = None) -> list[Claim]:
        """Lease up to *limit* due checks (oldest due first); [] when none is due."""
        request = self.next_request(now, limit)
        return [] if request is None else self.claim_now(request)

    def next_request(self, now: datetime, limit: int | None = None) -> ClaimRequest | None:
        """The next claim of up to *limit* checks, named (its token) but not made;
        None when there is no room (*limit* 0)."""
        limit = self.batch_size if limit is None else min(limit, self.batch_size)
        if limit <= 0:
            return None
        token = f"{self.worker_id}/{next(self._batches)}"
        return ClaimRequest(self.location, self.types, now, limit, token)

    def claim_now(self, request: ClaimRequest) -> list[Claim]:
        """Make the claim *request* names in this process (its one write transaction)."""
        with database.connection_context():
            return retry_locked(self._claim_tx)(request)

    def _claim_tx(self, request: ClaimRequest) -> list[Claim]:
        now, token = request.now, request.token
        with write_tx():
            rows = list(_DUE_ROWS.rows(now, request.location, request.limit, list(request.types)))
            if not rows:
                return []
            claims = [_claim_of(row, request.location, token) for row in rows]
            ids = [claim.row_id for claim in claims]
            taken = self._take(ids, token, now, now + self.lease)
        return [c for c in claims if c.row_id in taken]

    def _take(self, ids: list[int], token: str, now: datetime, expires: datetime) -> set[int]:
        updated = _TAKE.execute(token, expires, ids, now)
        if updated == len(ids):
            return set(ids)
        # Cannot happen under the row locks, but the guard decides, not the select.
        held = MonitorLocation.select(MonitorLocation.id).where(
            MonitorLocation.id.in_(ids) & (MonitorLocation.lease_owner == token)
        )
        return {row.id for row in held}

    @property
    def lease(self) -> timedelta:
        return timedelta(seconds=self.settings.lease_seconds)

    def renew(self, keys: Sequence[LeaseKey], now: datetime) -> set[LeaseKey]:
        """Extend the leases of *keys* to one lease from *now*; return the keys lost."""
        if not keys:
            return set()

        def tx() -> set[LeaseKey]:
            with write_tx():
                return renew_leases(keys, now + self.lease)

        with database.connection_context():
            kept = retry_locked(tx)()
        return set(keys) - kept

    # -- giving back -------------------------------------------------------

    def release(self, claims: list[Claim]) -> None:
        """Give back claims that were not run: still due, free for anyone at once."""
        self._update_claims(claims, None)

    def push_forward(self, claims: list[Claim], now: datetime) -> None:
        """Release claims whose run failed on our side, due again at their next slot."""
        self._update_claims(claims, now)

    def _update_claims(self, claims: list[Claim], now: datetime | None) -> None:
        leases = [
            (next_due(c, now) if now is not None else None, c.monitor_id, c.location, c.lease_owner)
            for c in claims
        ]
        if not leases:
            return

        def tx() -> None:
            with write_tx():
                give_back(leases)

        with database.connection_context():
            retry_locked(tx)()

    # -- looking ahead -----------------------------------------------------

    def oldest_due(self, now: datetime) -> datetime | None:
        """The earliest ``next_check_at`` this location could claim now or later."""
        with database.connection_context():
            return oldest_due(now, self.location)


def _claim_of(row: dict[str, Any], location: str, token: str) -> Claim:
    spec, error = None, None
    try:
        spec = check_spec(row)
    except (TypeError, ValueError) as exc:
        error = f"cannot build the check: {exc}"
    return Claim(
        row_id=row["id"],
        monitor_id=row["monitor"],
        monitor_created_at=row["created_at"],
        location=location,
        due=row["next_check_at"],
        interval=max(1, int(row["check_interval"] or 60)),
        first=row["last_status"] is None,
        lease_owner=token,
        spec=spec,
        spec_error=error,
    )


def _build_due_rows(now: datetime, location: str, limit: int, types: list[str]) -> Any:
    """Due, free rows of *location* (monitors of *types*) with their check columns, oldest first."""
    query = (
        MonitorLocation.select(
            MonitorLocation.id,
            MonitorLocation.monitor,
            MonitorLocation.next_check_at,
            MonitorLocation.last_status,
            Monitor.created_at,
            *(getattr(Monitor, name) for name in SPEC_FIELDS),
        )
        .join(Monitor, on=(MonitorLocation.monitor == Monitor.id))
        .where(
            (MonitorLocation.location == location)
            & (MonitorLocation.next_check_at <= now)
            & _lease_free(now)
            & ~Monitor.paused
            & Monitor.type.in_(types)
        )
        .order_by(MonitorLocation.next_check_at, MonitorLocation.id)
        .limit(limit)
        .dicts()
    )
    # Concurrent claimers skip rows another transaction is claiming.
    return locked(query, of=MonitorLocation, skip_locked=True)


def _build_take(token: str, expires: datetime, ids: list[int], now: datetime) -> Any:
    return MonitorLocation.update(lease_owner=token, lease_expires_at=expires).where(
        MonitorLocation.id.in_(ids) & _lease_free(now)
    )


# Claims run many times a second under load: their SQL text is built once
# (per database and batch size), not by peewee on every claim.
_DUE_ROWS = Prepared(_build_due_rows)
_TAKE = Prepared(_build_take)


def oldest_due(now: datetime, location: str | None = None) -> datetime | None:
    """The earliest ``next_check_at`` a dispatcher could claim now or later.

    Of *location*'s rows, or of every location's when None. The caller holds a
    connection.
    """
    oldest = oldest_claimable(now, location)
    return oldest[0] if oldest is not None else None


def oldest_claimable(now: datetime, location: str | None = None) -> tuple[datetime, int] | None:
    """``oldest_due``'s row: its ``next_check_at`` and its monitor's check interval."""
    claimable = _lease_free(now) & ~Monitor.paused & Monitor.type.in_(CHECKED_TYPES)
    if location is not None:
        claimable &= MonitorLocation.location == location
    # The first claimable row in the claim's index order, not a MIN over every
    # row: a scheduler asks on each turn, and with many due rows the MIN
    # joined and read them all (bench/README.md#figures-moved-from-the-code-issue-30). Without a
    # location it is a top-1 sort, which costs what the MIN did.
    rows = list(
        MonitorLocation.select(MonitorLocation.next_check_at, Monitor.check_interval)
        .join(Monitor, on=(MonitorLocation.monitor == Monitor.id))
        .where(claimable & MonitorLocation.next_check_at.is_null(False))
        .order_by(MonitorLocation.next_check_at)
        .limit(1)
        .tuples()
    )
    if not rows:
        return None
    due, interval = rows[0]
    return due, max(1, int(interval or 60))


def scheduler_lag(
    now: datetime, *, location: str | None = None, waiting: Iterable[datetime] = ()
) -> float:
    """Seconds the most overdue check is late at *now*; 0 when none is.

    The one definition of scheduler lag (/healthz, /metrics, the scheduler):
    among the due times of checks claimed and not started (*waiting*, which
    only a running scheduler knows) and the oldest claimable row in the
    database (of *location*, or of all). The caller holds a connection.
    """
    late = [due for due in (*waiting, oldest_due(now, location)) if due is not None and due <= now]
    return round((now - min(late)).total_seconds(), 3) if late else 0.0


def give_back(leases: Sequence[tuple[datetime | None, int, str, str]]) -> None:
    """Drop leases, each ``(next due time or None, monitor id, location, lease owner)``.

    The one way a claim ends without a recorded run: given back unrun (due
    unchanged, free for anyone at once) or pushed forward to its next slot
    after a failure on our side, by the dispatcher or inside the recorder's
    transaction. Runs in the caller's transaction.
    """
    rows = [(_db_time(due), *key) for due, *key in leases]
    dispatcher_sql.GIVE_BACK.run(rows)


def renew_leases(keys: Sequence[LeaseKey], until: datetime) -> set[LeaseKey]:
    """Set the leases of *keys* still held by their owners to expire at *until*.

    Returns the keys renewed; any other was lost (its lease expired and another
    process claimed the check, or it was already given back). One statement
    per ``RENEW_CHUNK`` keys, whatever their owners: a process renews all it
    holds at once (an agent's claims, through the agent API, alike). Only the
    owner's condition counts, not whether the lease has expired: a lease
    nobody took over is still its holder's. Runs in the caller's transaction.
    """
    kept: set[LeaseKey] = set()
    ordered = sorted(set(keys))
    for start in range(0, len(ordered), RENEW_CHUNK):
        chunk = ordered[start : start + RENEW_CHUNK]
        monitors, locations, owners = ({k[i] for k in chunk} for i in range(3))
        rows = (
            MonitorLocation.select(MonitorLocation.id)
            .where(
                MonitorLocation.monitor.in_(sorted(monitors))
                & MonitorLocation.location.in_(sorted(locations))
                & MonitorLocation.lease_owner.in_(sorted(owners))
            )
            .order_by(MonitorLocation.id)
        )
        # Row locks in id order, as the recorder takes them: never a deadlock.
        rows = locked(rows, of=MonitorLocation)
        query = (
            MonitorLocation.update(lease_expires_at=until)
            .where(MonitorLocation.id.in_(rows))
            .returning(
                MonitorLocation.monitor, MonitorLocation.location, MonitorLocation.lease_owner
            )
        )
        wanted = set(chunk)
        kept |= {key for key in query.tuples().execute() if key in wanted}
    return kept


def _db_time(value: datetime | None) -> Any:
    return MonitorLocation.next_check_at.db_value(value)


def _lease_free(now: datetime) -> Any:
    return MonitorLocation.lease_owner.is_null() | (MonitorLocation.lease_expires_at < now)
