"""The delivery loop: outbox rows out to SMTP, .eml files, Slack and channels, once each.

How "exactly once" is kept, as far as a mail server can be told:

- Claim: one due row at a time (pending, ``next_attempt_at <= now``, lease
  free or expired) is leased to this process by a conditional UPDATE; on
  PostgreSQL the candidate is selected ``FOR UPDATE SKIP LOCKED`` so two
  daemons never wait on, or take, each other's rows. The lease is longer than
  any socket timeout of a send, so nobody else can claim a row being sent.
- After the transport accepted the message, the row is marked sent (and, for
  email, the notification's ``email_sent_at`` set) in one transaction before
  the next row is claimed. If that write fails, the fact is kept in memory and
  written first on the next iteration. Only a crash between "accepted" and
  "marked" can send a message twice, and then it carries the same Message-ID
  (the file outbox even overwrites the same file).
- Rows of no notification (a team invitation, ``notify.invitation``) are
  claimed alike; they wait on nothing, and nothing waits on them. One is
  sent only while its invitation is still pending, and its link is dropped
  from the row once it is sent or given up.
- Per monitor and channel, messages leave in order: a row waits while an older
  row of the same monitor and channel (the implicit email/Slack one, or a
  named channel by id) is still pending, so a DOWN held back by a mail outage
  never arrives after its UP.
- Temporary failures are retried with backoff (30 s doubling up to 24 h, with
  jitter, never sooner than a Retry-After); permanent ones are marked failed
  with the error and never retried. A message still undelivered after
  ``MAX_AGE`` is given up as failed too: an alert days late helps nobody.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import JOIN, SQL, Expression, ModelSelect, fn

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database, locked, retry_locked, write_tx
from uptime_server.models import Channel, Invitation, Notification, Outbox
from uptime_server.notify import invitation
from uptime_server.notify.channels import ChannelSender
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.message import AlertContent, build_email, single_line, slack_payload
from uptime_server.notify.outbox import content_from_json
from uptime_server.notify.senders import (
    SLACK_TIMEOUT,
    SMTP_TIMEOUT,
    email_transport_for,
    slack_transport_for,
)
from uptime_server.notify.transports import (
    EmailTransport,
    PermanentDeliveryError,
    SlackTransport,
    TemporaryDeliveryError,
    backoff_delay,
)

log = logging.getLogger(__name__)

BATCH = 20  # rows per iteration before the runner gets a word in
IDLE_POLL = 1.0  # seconds between looks at an empty outbox
MAX_AGE = timedelta(days=3)
MAX_DELAY = 86400.0
MAX_ERROR_CHARS = 1000


@dataclass(frozen=True)
class _Sent:
    """A send the server accepted but the database has not recorded yet."""

    outbox_id: int
    notification_id: int | None
    channel: str
    at: datetime
    payload: dict[str, object] | None = None  # written instead of the stored one


class DeliveryLoop:
    """One iteration = deliver up to ``batch`` due outbox rows."""

    name = "delivery"

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        email: EmailTransport | None = None,
        slack: SlackTransport | None = None,
        channels: ChannelSender | None = None,
        owner: str | None = None,
        batch: int = BATCH,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self.clock = clock or Clock()
        # Outbox rows have a lease of their own (not renewed while sending):
        # long enough for a slow SMTP relay, as every socket operation must
        # finish well inside it.
        self.lease = timedelta(seconds=settings.delivery_lease_seconds)
        timeout = min(SMTP_TIMEOUT, settings.delivery_lease_seconds / 4)
        self.email = email or email_transport_for(settings, timeout=timeout)
        self.slack = slack or slack_transport_for(settings, timeout=min(SLACK_TIMEOUT, timeout))
        self.channels = channels or ChannelSender(
            settings, timeout=min(SLACK_TIMEOUT, timeout), email=self.email, slack=self.slack
        )
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.batch = batch
        self.rng = rng
        self.sent = 0  # messages accepted by a server since start (cron mode reports it)
        # Set by the runner: True once the daemon is stopping.
        self.stop_requested: Callable[[], bool] = lambda: False
        self._unmarked: list[_Sent] = []

    # -- the iteration -------------------------------------------------------

    def loop(self, now: datetime) -> float:
        """Deliver what is due at *now*; return seconds until the next look."""
        with database.connection_context():
            if not self._flush_unmarked():
                return IDLE_POLL
            for _ in range(self.batch):
                if self.stop_requested():
                    return IDLE_POLL
                row = retry_locked(self._claim)(now)
                if row is None:
                    return IDLE_POLL
                self._deliver(row)
        return 0.0  # a full batch: more may be waiting

    def shutdown(self, grace: float) -> None:
        # Nothing is held between iterations: a row is claimed only while it
        # is being sent, and an unfinished claim simply expires.
        self.stop_requested = lambda: True
        if self._unmarked:
            with database.connection_context():
                self._flush_unmarked()

    # -- claiming ------------------------------------------------------------

    def _claim(self, now: datetime) -> Outbox | None:
        if not _due(now).exists():
            return None  # idle: no write transaction (SQLite's lock) just to look
        with write_tx():
            candidate = locked(_due(now).limit(1), of=Outbox, skip_locked=True).first()
            if candidate is None:
                return None
            moment = self.clock.now()
            taken = (
                Outbox.update(lease_owner=self.owner, lease_expires_at=moment + self.lease)
                .where((Outbox.id == candidate.id) & _claimable(now))
                .execute()
            )
            return Outbox.get_by_id(candidate.id) if taken == 1 else None

    # -- sending -------------------------------------------------------------

    def _deliver(self, row: Outbox) -> None:
        try:
            self._send(row)
        except PermanentDeliveryError as exc:
            self._give_up(row, str(exc))
        except TemporaryDeliveryError as exc:
            self._reschedule(row, str(exc), exc.retry_after)
        except Exception as exc:  # unclassified: assume it may pass
            log.exception("outbox %s: unexpected error while sending", row.id)
            self._reschedule(row, f"{type(exc).__name__}: {exc}", None)
        else:
            self._mark_sent(row)

    def _send(self, row: Outbox) -> None:
        if row.event == invitation.EVENT:
            self._send_invitation(row)
            return
        if row.channel_id is not None:
            self._send_to_channel(row)
            return
        try:
            content = content_from_json(row.payload)
            if row.channel == "email":
                message = build_email(
                    content,
                    sender=self.settings.mail_from,
                    recipients=list(row.recipients),
                    message_id=row.message_id,
                )
            elif row.channel == "slack":
                payload = slack_payload(content)
            else:
                raise ValueError(f"unknown channel {row.channel!r}")
        except (ValueError, TypeError, KeyError) as exc:
            # The stored row cannot become a message; no retry will change that.
            raise PermanentDeliveryError(f"cannot build the message: {exc}") from None
        if row.channel == "email":
            self.email.send(message)
        else:
            self.slack.post(row.target or "", payload)

    def _send_invitation(self, row: Outbox) -> None:
        """A team invitation's email, while the invitation can still be accepted."""
        try:
            content = invitation.from_json(row.payload)
            message = invitation.build_invitation_email(
                content,
                sender=self.settings.mail_from,
                recipients=list(row.recipients),
                message_id=row.message_id,
            )
        except (ValueError, TypeError, KeyError) as exc:
            raise PermanentDeliveryError(f"cannot build the message: {exc}") from None
        pending = Invitation.select().where(
            (Invitation.id == content.invitation_id)
            & Invitation.accepted_at.is_null()
            & (Invitation.expires_at > self.clock.now())
        )
        if not pending.exists():
            raise PermanentDeliveryError("the invitation was revoked, accepted or has expired")
        self.email.send(message)

    def _send_to_channel(self, row: Outbox) -> None:
        """A row of a named channel: its config is read now, so an edit applies to retries."""
        channel = Channel.get_or_none(Channel.id == row.channel_id)
        if channel is None:
            raise PermanentDeliveryError("the channel was deleted")
        try:
            content = content_from_json(row.payload)
        except (ValueError, TypeError, KeyError) as exc:
            raise PermanentDeliveryError(f"cannot build the message: {exc}") from None
        message = ChannelMessage(
            content,
            message_id=row.message_id,
            event=row.event,
            incident_id=_incident_id(row.notification_id, content),
        )
        self.channels.send(channel.type, channel.config, message)

    # -- recording the outcome -------------------------------------------------

    def _mark_sent(self, row: Outbox) -> None:
        self.sent += 1
        done = _Sent(row.id, row.notification_id, row.channel, self.clock.now(), _scrubbed(row))
        try:
            retry_locked(_write_sent)(done)
        except Exception:  # remembered and written next iteration
            log.exception("outbox %s: sent, but could not record it yet", row.id)
            self._unmarked.append(done)

    def _flush_unmarked(self) -> bool:
        """Record earlier sends first; False while the database still refuses."""
        while self._unmarked:
            try:
                retry_locked(_write_sent)(self._unmarked[0])
            except Exception:
                log.exception(
                    "outbox %s: still cannot record the send", self._unmarked[0].outbox_id
                )
                return False
            self._unmarked.pop(0)
        return True

    def _reschedule(self, row: Outbox, error: str, retry_after: float | None) -> None:
        moment = self.clock.now()
        attempts = row.attempts + 1
        if moment - row.created_at >= MAX_AGE:
            self._give_up(row, f"gave up after {attempts} attempts: {error}")
            return
        delay = backoff_delay(attempts, rng=self.rng)
        if retry_after:
            delay = max(delay, min(retry_after, MAX_DELAY))
        retry_at = moment + timedelta(seconds=delay)
        self._finish(
            row,
            attempts=attempts,
            next_attempt_at=retry_at,
            last_error=_clip(error),
        )
        log.warning(
            "%s %s (outbox %s) failed, attempt %d; retrying at %s: %s",
            row.channel,
            row.message_id,
            row.id,
            attempts,
            retry_at.isoformat(),
            _clip(error),
        )

    def _give_up(self, row: Outbox, error: str) -> None:
        scrubbed = _scrubbed(row)
        extra = {} if scrubbed is None else {"payload": scrubbed}
        self._finish(
            row, attempts=row.attempts + 1, status="failed", last_error=_clip(error), **extra
        )
        log.error(
            "%s %s (outbox %s) failed permanently: %s",
            row.channel,
            row.message_id,
            row.id,
            _clip(error),
        )

    def _finish(self, row: Outbox, **changes: object) -> None:
        def write() -> None:
            with write_tx():
                Outbox.update(lease_owner=None, lease_expires_at=None, **changes).where(
                    (Outbox.id == row.id)
                    & (Outbox.lease_owner == self.owner)
                    & (Outbox.status == "pending")
                ).execute()

        retry_locked(write)()


def _claimable(now: datetime) -> Expression:
    return (
        (Outbox.status == "pending")
        & (Outbox.next_attempt_at <= now)
        & (Outbox.lease_owner.is_null() | (Outbox.lease_expires_at <= now))
    )


def _due(now: datetime) -> ModelSelect:
    """Claimable rows with no older pending row of the same monitor and channel."""
    older = Outbox.alias("older")
    older_note = Notification.alias("older_note")
    earlier_pending = (
        older.select(SQL("1"))
        .join(older_note, on=(older.notification == older_note.id))
        .where(
            (older_note.monitor == Notification.monitor)
            & (older.channel == Outbox.channel)
            & (fn.COALESCE(older.channel_id, 0) == fn.COALESCE(Outbox.channel_id, 0))
            & (older.status == "pending")
            & (older.id < Outbox.id)
        )
    )
    return (
        Outbox.select(Outbox.id)
        .join(Notification, JOIN.LEFT_OUTER, on=(Outbox.notification == Notification.id))
        .where(_claimable(now) & ~fn.EXISTS(earlier_pending))
        .order_by(Outbox.next_attempt_at, Outbox.id)
    )


# Kinds that belong to an earlier notification of the same monitor and start:
# a recovery and a reminder to their downtime, a settling to its flapping.
_BELONGS_TO = {"recovery": "downtime", "reminder": "downtime", "flapping_settled": "flapping"}


def _incident_id(notification_id: int, content: AlertContent) -> int:
    """The notification *content* is about (PagerDuty's dedup_key), else itself.

    A recovery or a reminder names the downtime it follows (same monitor and
    start), and a ``flapping_settled`` the ``flapping`` it ends, so PagerDuty
    folds each into the incident it belongs to.
    """
    parent = _BELONGS_TO.get(content.kind)
    if parent is None:
        return notification_id
    note = Notification.get_or_none(Notification.id == notification_id)
    if note is None:
        return notification_id
    found = (
        Notification.select(Notification.id)
        .where(
            (Notification.monitor == note.monitor_id)
            & (Notification.type == parent)
            & (Notification.started_at == note.started_at)
        )
        .order_by(Notification.id.desc())
        .first()
    )
    return found.id if found else notification_id


def _scrubbed(row: Outbox) -> dict[str, object] | None:
    """An invitation row's payload without its link (None: the row keeps its payload)."""
    if row.event != invitation.EVENT or not isinstance(row.payload, dict):
        return None
    return invitation.scrubbed(row.payload)


def _write_sent(done: _Sent) -> None:
    extra = {} if done.payload is None else {"payload": done.payload}
    with write_tx():
        Outbox.update(
            status="sent",
            sent_at=done.at,
            attempts=Outbox.attempts + 1,
            last_error=None,
            lease_owner=None,
            lease_expires_at=None,
            **extra,
        ).where((Outbox.id == done.outbox_id) & (Outbox.status != "sent")).execute()
        if done.channel == "email" and done.notification_id is not None:
            Notification.update(email_sent_at=done.at).where(
                (Notification.id == done.notification_id) & Notification.email_sent_at.is_null()
            ).execute()


def _clip(text: str) -> str:
    return single_line(text)[:MAX_ERROR_CHARS]


# --- cron mode ------------------------------------------------------------------


def deliver_due(settings: Settings, clock: Clock | None = None, *, batch: int = BATCH) -> int:
    """Cron mode: deliver everything due now; return how many messages went out.

    Failures are rescheduled (or failed) exactly as in the daemon, so the next
    cron run picks up where this one stopped.
    """
    loop = DeliveryLoop(settings, clock=clock, batch=batch)
    now = loop.clock.now()
    while loop.loop(now) == 0.0:
        pass
    return loop.sent
