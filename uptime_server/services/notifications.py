"""Notifications of one team: listing, filtering, acknowledge, resolve by hand.

Writes are conditional on the notification still being active, so they
compose with the check engine, which resolves notifications in its own
transactions. Resolving by hand locks the monitor row first (the order the
recorder uses) and bumps its ``state_version``, so a check run read before the
resolve cannot open a new incident on stale state afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import JOIN, ModelSelect

from uptime_server.auth.teams import Acting
from uptime_server.db import INT64_MAX, write_tx
from uptime_server.errors import ApiError
from uptime_server.models import Channel, Monitor, Notification, Outbox, User
from uptime_server.notify import outbox
from uptime_server.services import audit

RECENT_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class Filters:
    monitor_id: int | None = None
    type: str | None = None
    status: str | None = None
    since: datetime | None = None
    # True: only suppressed notifications (a blocked monitor's); False: only the others.
    suppressed: bool | None = None


@dataclass(frozen=True)
class Page:
    rows: list[Notification]
    total: int


def not_found() -> ApiError:
    return ApiError("NOTIFICATION_NOT_FOUND", "Notification not found")


def not_active(note: Notification) -> ApiError:
    return ApiError(
        "NOTIFICATION_NOT_ACTIVE",
        f"Notification {note.id} is {note.status}, not active",
    )


# Who acknowledged and who resolved by hand, read in the same query as the
# notification (``acker``, ``resolver``: None when nobody, or the account is gone).
_ACKER = User.alias("acker")
_RESOLVER = User.alias("resolver")


def _owned(acting: Acting) -> ModelSelect:
    """The team's notifications with their monitor and the users who acted, newest first."""
    return (
        Notification.select(
            Notification, Monitor, _ACKER.id, _ACKER.name, _RESOLVER.id, _RESOLVER.name
        )
        .join(Monitor, on=(Notification.monitor == Monitor.id))
        .switch(Notification)
        .join(
            _ACKER,
            JOIN.LEFT_OUTER,
            on=(Notification.acknowledged_by == _ACKER.id),
            attr="acker",
        )
        .switch(Notification)
        .join(
            _RESOLVER,
            JOIN.LEFT_OUTER,
            on=(Notification.resolved_by == _RESOLVER.id),
            attr="resolver",
        )
        .where(Notification.team == acting.team_id)
        .order_by(Notification.started_at.desc(), Notification.id.desc())
    )


def get_owned(acting: Acting, notification_id: int) -> Notification:
    if not 0 < notification_id <= INT64_MAX:
        raise not_found()  # cannot exist, and would not bind as a database integer
    note = _owned(acting).where(Notification.id == notification_id).first()
    if note is None:
        raise not_found()
    return note


def deliveries(note: Notification) -> list[tuple[Outbox, str | None]]:
    """The outbox rows of *note*, oldest first, each with its channel's name (if any)."""
    rows = list(Outbox.select().where(Outbox.notification == note.id).order_by(Outbox.id))
    ids = {r.channel_id for r in rows if r.channel_id is not None}
    names = {}
    if ids:
        names = {c.id: c.name for c in Channel.select().where(Channel.id.in_(list(ids)))}
    return [(r, names.get(r.channel_id)) for r in rows]


def list_active(acting: Acting) -> list[Notification]:
    return list(_owned(acting).where(Notification.status == "active"))


def list_recent(acting: Acting, *, now: datetime, page: int, limit: int) -> Page:
    query = _owned(acting).where(Notification.started_at >= now - RECENT_WINDOW)
    return _page(query, page, limit)


def list_filtered(acting: Acting, filters: Filters, *, page: int, limit: int) -> Page:
    query = _owned(acting)
    if filters.monitor_id is not None:
        query = query.where(Notification.monitor == filters.monitor_id)
    if filters.type is not None:
        query = query.where(Notification.type == filters.type)
    if filters.status is not None:
        query = query.where(Notification.status == filters.status)
    if filters.since is not None:
        query = query.where(Notification.started_at >= filters.since)
    if filters.suppressed is not None:
        query = query.where(Notification.suppressed_by.is_null(not filters.suppressed))
    return _page(query, page, limit)


def _page(query: ModelSelect, page: int, limit: int) -> Page:
    total = query.order_by().count()
    # A page past the last row is answered without asking the database for an
    # offset that may not even fit its integer type.
    if (page - 1) * limit >= total:
        return Page([], total)
    return Page(list(query.paginate(page, limit)), total)


def acknowledge(
    acting: Acting, notification_id: int, *, now: datetime, mail_domain: str = "uptime.local"
) -> Notification:
    """Mark an active notification acknowledged; a second call keeps the first time.

    The first acknowledgement also leaves an ``acknowledge`` message for each
    PagerDuty channel of the monitor in the outbox, and the audit line, in
    the same transaction; it records who acknowledged (``acknowledged_by``).
    """
    with write_tx():
        note = get_owned(acting, notification_id)
        if note.status != "active":
            raise not_active(note)
        if not note.acknowledged:
            # Acknowledged: no more reminders (engine/reminders.py).
            changed = (
                Notification.update(
                    acknowledged=True,
                    acknowledged_at=now,
                    acknowledged_by=acting.user_id,
                    next_reminder_at=None,
                )
                .where((Notification.id == note.id) & ~Notification.acknowledged)
                .execute()
            )
            # A suppressed downtime was never sent: no incident to acknowledge.
            if changed and note.suppressed_by is None:
                outbox.enqueue_acknowledgement(note, note.monitor, mail_domain=mail_domain, now=now)
            if changed:
                _record(acting, "notification.acknowledge", note, now)
    return get_owned(acting, notification_id)


def resolve(acting: Acting, notification_id: int, *, now: datetime) -> Notification:
    """Resolve an active notification by hand (no email is sent).

    A downtime resolved while its monitor still fails suppresses new
    incidents until the monitor has recovered
    (docs/api.md#notification-life-cycle); the recorder lifts the flag on the
    first passing run. It records who resolved (``resolved_by``) and leaves
    the audit line in the same transaction.
    """
    with write_tx():
        note = get_owned(acting, notification_id)
        if note.status != "active":
            raise not_active(note)
        if note.type == "downtime":
            # Lock the monitor first, as the recorder does, then re-check.
            Monitor.update(
                alerts_suppressed=Monitor.status == "offline",
                state_version=Monitor.state_version + 1,
            ).where(Monitor.id == note.monitor_id).execute()
        if not note.resolve_if_active(now, by=acting.user_id):
            # Resolved by a check run meanwhile: undo the monitor change too.
            raise not_active(Notification.get_by_id(note.id))
        _record(acting, "notification.resolve", note, now)
    return get_owned(acting, notification_id)


def _record(acting: Acting, action: str, note: Notification, now: datetime) -> None:
    details = {"monitor_id": note.monitor_id, "type": note.type}
    audit.record(acting, action, "notification", note.id, details, at=now)
