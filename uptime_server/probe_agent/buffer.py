"""The agent's results on disk, in batches, until the server has them.

Every result is written here before it is posted: one JSON file per batch,
named by a sequence number so batches are flushed in the order they were
made, and carrying the batch's id, which the server keys its idempotency
on. A batch keeps its id whatever happens (a crash, a restart, a retry), and
a result belongs to exactly one batch, so no result is ever posted twice
under two ids. A file is deleted only once the server has answered it.
Before its first post a batch is marked ``sent`` on disk: from then on the
server may hold it (the answer may be what was lost), so it is posted again
whole, never trimmed of expired results by the agent.

Bounded: past ``max_results`` buffered results, the oldest batches are
dropped (and counted) to make room: their leases would have expired long
before anyway. Files are written to a temporary name and renamed, so a
crash leaves either the whole batch or none of it.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uptime_server.files import private_dir

log = logging.getLogger(__name__)

Result = dict[str, Any]  # one result as posted, plus its ``lease_expires_at``


@dataclass
class Batch:
    seq: int
    batch_id: str
    results: list[Result]
    path: Path
    sent: bool = False  # posted at least once: the server may have recorded it


class DiskBuffer:
    def __init__(self, directory: Path, *, max_results: int = 10_000) -> None:
        self.directory = directory
        self.max_results = max_results
        private_dir(directory)
        self._batches = self._load()
        self.dropped = 0  # results dropped because the buffer was full

    def _load(self) -> list[Batch]:
        batches = []
        for path in sorted(self.directory.glob("*.json")):
            try:
                data = json.loads(path.read_text())
                batches.append(
                    Batch(
                        int(path.stem),
                        data["batch_id"],
                        data["results"],
                        path,
                        sent=bool(data.get("sent", False)),
                    )
                )
            except (OSError, ValueError, KeyError):
                log.exception("agent buffer: unreadable batch %s left aside", path)
                path.rename(path.with_suffix(".bad"))
        return batches

    def __len__(self) -> int:
        return sum(len(b.results) for b in self._batches)

    @property
    def batches(self) -> list[Batch]:
        """Oldest first: the order they are flushed in."""
        return list(self._batches)

    def add(self, results: list[Result], batch_size: int) -> None:
        """Store *results* as new batches of at most *batch_size*, each with a new id."""
        for start in range(0, len(results), batch_size):
            chunk = results[start : start + batch_size]
            seq = self._batches[-1].seq + 1 if self._batches else 1
            batch = Batch(seq, uuid.uuid4().hex, chunk, self.directory / f"{seq:012d}.json")
            self._write(batch)
            self._batches.append(batch)
        self._bound()

    def keep_only(self, batch: Batch, keep: Callable[[Result], bool]) -> int:
        """Drop the results of *batch* that *keep* refuses; how many were dropped."""
        kept = [r for r in batch.results if keep(r)]
        dropped = len(batch.results) - len(kept)
        if dropped:
            batch.results = kept
            if kept:
                self._write(batch)  # the same batch id: only its content shrinks
            else:
                self.done(batch)
        return dropped

    def mark_sent(self, batch: Batch, sent: bool = True) -> None:
        """Record on disk, before its first post, that *batch* may reach the server
        (or, *sent* False, that the post surely did not)."""
        if batch.sent != sent:
            batch.sent = sent
            self._write(batch)

    def done(self, batch: Batch) -> None:
        """The server answered *batch* (or nothing of it is left): forget it."""
        batch.path.unlink(missing_ok=True)
        self._batches = [b for b in self._batches if b.seq != batch.seq]

    def _bound(self) -> None:
        while len(self) > self.max_results and len(self._batches) > 1:
            oldest = self._batches[0]
            self.dropped += len(oldest.results)
            log.warning(
                "agent buffer full (%d results): dropped the oldest batch of %d",
                self.max_results,
                len(oldest.results),
            )
            self.done(oldest)

    def _write(self, batch: Batch) -> None:
        tmp = batch.path.with_suffix(".tmp")
        data = {"batch_id": batch.batch_id, "results": batch.results, "sent": batch.sent}
        tmp.write_text(json.dumps(data))
        os.replace(tmp, batch.path)
