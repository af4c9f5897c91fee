"""The agent API's work: claims, lease renewals and result batches of one agent.

Claims go through the engine's ``Dispatcher`` (same query, same leases), with
the agent's location and a lease owner token naming the agent
(``agent<id>-<random>/<batch>``); renewals through ``Dispatcher.renew``;
results through the same ``Recorder`` as the in-process scheduler, so state,
alerts, roll-ups and the outbox are written exactly as for a local run.

A result names its claim by (monitor id, lease owner). The server reads the
claimed row to learn the claim's due time and interval (the next due time is
computed here, as the scheduler does, never taken from the agent), and the
recorder refuses a result whose lease the agent no longer holds.

What a result says is the agent's word, so it is checked before it is
recorded, per result: ``checked_at`` must carry a zone and fall within
[the claim's due time - lease, now + ``CLOCK_SLACK``] (a run cannot have
started long before its check was due, nor in the future beyond a clock's
drift), or the result is refused with a reason and the rest of the batch is
recorded. ``response_time`` is cut to the monitor's timeout, and ``error``
is stored as the server's own errors are: printable, at most
``checks.rules.ERROR_LIMIT`` characters.

Batches are idempotent: the answer to a batch that recorded something is
stored under the agent's batch id in the transaction that records it, so a
batch posted twice (the agent did not see the first answer) records nothing
the second time and gets the first answer again. Batch ids are remembered
for ``BATCH_MEMORY``. A batch that recorded nothing leaves no row: posting
it again changes nothing either, and made-up batches cannot fill the table.

Each claim carries the server's private-target policy
(``block_private_targets``): the agent's probes refuse such targets as the
server's own do, whatever the agent's own setting.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from peewee import IntegrityError

from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.checks.rules import stored_error
from uptime_server.checks.types import RunResult
from uptime_server.checks.wire import spec_to_json
from uptime_server.config import Settings
from uptime_server.db import database, retry_locked, write_tx
from uptime_server.engine.dispatcher import Claim, Dispatcher, LeaseKey, next_due
from uptime_server.engine.recorder import Recorder
from uptime_server.models import CHECKED_TYPES, AgentBatch, AgentToken, Monitor, MonitorLocation
from uptime_server.schemas.agents import MAX_CLAIM, AgentReport, ResultBatch, ResultIn

# A heartbeat's verdict reads the server's own state: never an agent's to run.
AGENT_TYPES = tuple(t for t in CHECKED_TYPES if t != "heartbeat")
BATCH_MEMORY = timedelta(days=1)
# How far ahead of the server's clock an agent's checked_at may be.
CLOCK_SLACK = timedelta(seconds=60)
# An agent not heard from for this long is not reported degraded any more.
SEEN_RECENTLY = timedelta(minutes=5)


def owner_prefix(agent: AgentToken) -> str:
    return f"agent{agent.id}-"


def owns(agent: AgentToken, lease_owner: str) -> bool:
    return lease_owner.startswith(owner_prefix(agent))


def dispatcher_for(agent: AgentToken, settings: Settings) -> Dispatcher:
    # A fresh random part per request: a lease owner token is never reused,
    # so a late result of an old claim can never pass for a new one's.
    return Dispatcher(
        settings,
        location=agent.location,
        worker_id=f"{owner_prefix(agent)}{secrets.token_hex(6)}",
        batch_size=MAX_CLAIM,
        types=AGENT_TYPES,
    )


# -- what the agent reports ----------------------------------------------------------


def report(agent: AgentToken, seen: AgentReport | None, now: datetime) -> None:
    """Note the agent was seen at *now*, with what it says of itself."""
    values: dict[str, Any] = {"last_seen_at": now}
    if seen is not None:
        values["degraded"] = seen.degraded
        for name in ("version", "checks_per_second", "lag_seconds", "dropped_results"):
            value = getattr(seen, name)
            if value is not None:
                values[name] = value
    with database.connection_context():
        retry_locked(AgentToken.update(**values).where(AgentToken.id == agent.id).execute)()


def degraded_agents(now: datetime) -> list[AgentToken]:
    """Agents that said they are degraded and were seen recently."""
    return list(
        AgentToken.select()
        .where(AgentToken.degraded & (AgentToken.last_seen_at >= now - SEEN_RECENTLY))
        .order_by(AgentToken.id)
    )


# -- claims and leases -------------------------------------------------------------


def claim(
    agent: AgentToken, settings: Settings, limit: int, now: datetime
) -> tuple[list[dict[str, Any]], datetime]:
    """Lease up to *limit* due checks of the agent's location; (claims as JSON, lease expiry)."""
    dispatcher = dispatcher_for(agent, settings)
    claims = dispatcher.claim(now, limit)
    broken = [c for c in claims if c.spec is None]
    if broken:
        # Cannot be built into a check: to its next slot, as the scheduler does.
        dispatcher.push_forward(broken, now)
    expires = now + dispatcher.lease
    block = settings.block_private_targets
    return [_claim_json(c, expires, block) for c in claims if c.spec is not None], expires


def _claim_json(claim: Claim, expires: datetime, block_private: bool) -> dict[str, Any]:
    assert claim.spec is not None
    return {
        "monitor_id": claim.monitor_id,
        "location": claim.location,
        "lease_owner": claim.lease_owner,
        "lease_expires_at": expires,
        "due": claim.due,
        "spec": spec_to_json(claim.spec),
        "block_private_targets": block_private,
    }


def renew(
    agent: AgentToken, settings: Settings, leases: Sequence[tuple[int, str]], now: datetime
) -> tuple[list[tuple[int, str]], list[tuple[int, str]], datetime]:
    """Extend the agent's *leases* (monitor id, owner); (renewed, lost, new expiry)."""
    dispatcher = dispatcher_for(agent, settings)
    wanted = list(dict.fromkeys(leases))
    keys: list[LeaseKey] = [(m, agent.location, o) for m, o in wanted if owns(agent, o)]
    lost_keys = dispatcher.renew(keys, now)
    kept = {(m, o) for m, _loc, o in keys} - {(m, o) for m, _loc, o in lost_keys}
    renewed = [ref for ref in wanted if ref in kept]
    lost = [ref for ref in wanted if ref not in kept]
    return renewed, lost, now + dispatcher.lease


# -- results -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Held:
    """The claimed row as the database has it: what the claim was."""

    row_id: int
    due: datetime
    first: bool
    interval: int
    created_at: datetime
    timeout: int  # seconds


def record_batch(
    agent: AgentToken, settings: Settings, batch: ResultBatch, now: datetime
) -> dict[str, Any]:
    """Record *batch* once; the answer (JSON), the stored one for a batch id seen before."""

    def tx() -> dict[str, Any]:
        with write_tx():
            stored = _stored(agent, batch.batch_id)
            if stored is not None:
                return stored
            answer = _record(agent, settings, batch, now)
            if not answer["recorded"]:
                return answer
            AgentBatch.delete().where(
                (AgentBatch.agent == agent.id) & (AgentBatch.created_at < now - BATCH_MEMORY)
            ).execute()
            AgentBatch.create(
                agent=agent.id,
                batch_id=batch.batch_id,
                response=json.dumps(answer),
                created_at=now,
            )
            return answer

    with database.connection_context():
        try:
            return retry_locked(tx)()
        except IntegrityError:
            # The same batch, posted twice at once: the other post recorded it.
            stored = _stored(agent, batch.batch_id)
            if stored is None:
                raise
            return stored


def _stored(agent: AgentToken, batch_id: str) -> dict[str, Any] | None:
    row = AgentBatch.get_or_none((AgentBatch.agent == agent.id) & (AgentBatch.batch_id == batch_id))
    if row is None:
        return None
    answer: dict[str, Any] = json.loads(row.response)
    answer["duplicate"] = True
    return answer


def _record(
    agent: AgentToken, settings: Settings, batch: ResultBatch, now: datetime
) -> dict[str, Any]:
    held = _held_rows(agent, batch.results)
    earliest = timedelta(seconds=settings.lease_seconds)
    answers: list[dict[str, Any]] = []
    outcomes: list[CheckOutcome] = []
    slots: list[int] = []  # the answer each outcome fills in
    for result in batch.results:
        answer = {
            "monitor_id": result.monitor_id,
            "lease_owner": result.lease_owner,
            "status": "refused",
            "reason": None,
            "counted": result.counted or result.passed,
        }
        answers.append(answer)
        row = held.get((result.monitor_id, result.lease_owner))
        if not owns(agent, result.lease_owner):
            answer["reason"] = "not_yours"
        elif row is None:
            answer["reason"] = "lease_lost"
        elif result.checked_at.utcoffset() is None:
            answer["reason"] = "checked_at_not_aware"
        elif not row.due - earliest <= result.checked_at <= now + CLOCK_SLACK:
            answer["reason"] = "checked_at_out_of_range"
        else:
            outcomes.append(_outcome(agent, result, row, now))
            slots.append(len(answers) - 1)
    done = Recorder(settings).record(outcomes, now=now) if outcomes else []
    for index, recorded in zip(slots, done, strict=True):
        if recorded.run_id is not None:
            answers[index]["status"] = "recorded"
        else:
            answers[index]["reason"] = recorded.skipped or "not_recorded"
    recorded_count = sum(1 for a in answers if a["status"] == "recorded")
    return {
        "batch_id": batch.batch_id,
        "duplicate": False,
        "recorded": recorded_count,
        "refused": len(answers) - recorded_count,
        "results": answers,
    }


def _held_rows(agent: AgentToken, results: Sequence[ResultIn]) -> dict[tuple[int, str], _Held]:
    """The claimed rows the agent still holds, by (monitor id, lease owner)."""
    owners = sorted({r.lease_owner for r in results if owns(agent, r.lease_owner)})
    monitors = sorted({r.monitor_id for r in results})
    if not owners:
        return {}
    rows = (
        MonitorLocation.select(
            MonitorLocation.id,
            MonitorLocation.monitor,
            MonitorLocation.lease_owner,
            MonitorLocation.next_check_at,
            MonitorLocation.last_status,
            Monitor.check_interval,
            Monitor.created_at,
            Monitor.timeout,
        )
        .join(Monitor, on=(MonitorLocation.monitor == Monitor.id))
        .where(
            (MonitorLocation.location == agent.location)
            & MonitorLocation.monitor.in_(monitors)
            & MonitorLocation.lease_owner.in_(owners)
        )
        .tuples()
    )
    return {
        (monitor_id, owner): _Held(
            row_id, due, last is None, max(1, int(interval or 60)), created, int(timeout or 30)
        )
        for row_id, monitor_id, owner, due, last, interval, created, timeout in rows
    }


def _outcome(agent: AgentToken, result: ResultIn, row: _Held, now: datetime) -> CheckOutcome:
    claim = Claim(
        row_id=row.row_id,
        monitor_id=result.monitor_id,
        monitor_created_at=row.created_at,
        location=agent.location,
        due=row.due,
        interval=row.interval,
        first=row.first,
        lease_owner=result.lease_owner,
        spec=None,
    )
    # The agent's run, as the in-process engine would have handed it over,
    # within what that engine could have produced.
    run = RunResult(**result.model_dump(include=_RUN_FIELDS))
    run.error = stored_error(run.error)
    if run.response_time is not None:
        run.response_time = min(run.response_time, row.timeout * 1000)
    outcome = CheckOutcome.from_run(
        run,
        monitor_id=result.monitor_id,
        monitor_created_at=row.created_at,
        location=agent.location,
        checked_at=result.checked_at.astimezone(UTC),
        next_check_at=next_due(claim, now),
        lease_owner=result.lease_owner,
    )
    # Only a failure can be uncounted: a pass proves the uplink works.
    return replace(outcome, counted=result.counted or result.passed)


# What a posted result carries of a probe's RunResult (not a heartbeat verdict's
# expect_version or next_due: agents never run heartbeats).
_RUN_FIELDS = {f.name for f in fields(RunResult)} & set(ResultIn.model_fields)
