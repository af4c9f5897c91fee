"""Monitors of one team: listing, life cycle (create, update, pause, resume,
delete, bulk), alert settings, and the figures shown beside a monitor.

State-changing writes are conditional on the monitor's current state (paused
flag, ``state_version``) so they compose safely with the check engine, which
writes status in its own transactions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from peewee import SQL, NodeList, fn

from uptime_server.auth import ping_tokens
from uptime_server.auth.badge_tokens import ensure_token, new_token
from uptime_server.auth.teams import Acting, lock_team
from uptime_server.checks import quorum
from uptime_server.config import Settings
from uptime_server.db import INT64_MAX, Prepared, write_tx
from uptime_server.engine import reminders
from uptime_server.errors import ApiError, monitor_not_found, validation_error
from uptime_server.heartbeats.schedule import HeartbeatSchedule
from uptime_server.maintenance import windows as maintenance_windows
from uptime_server.models import (
    CHECKED_TYPES,
    PASSIVE_TYPES,
    AlertSettings,
    CheckRun,
    Monitor,
    MonitorLocation,
    Notification,
)
from uptime_server.models.tags import having_all, replace_tags, tags_by_monitor, tags_of
from uptime_server.schemas.monitor_config import (
    AlertSettingsIn,
    MonitorConfig,
    check_patch_fields,
    parse_alert_settings,
    parse_monitor_update,
    quorum_errors,
    type_defaults_missing,
)
from uptime_server.services import audit, dependencies, render_purges
from uptime_server.services import channels as channel_service
from uptime_server.stats.uptime_cache import cache as uptime_cache

CONFIG_FIELDS = tuple(MonitorConfig.model_fields)
# Tags and dependencies live in their own tables (monitor_tags,
# monitor_dependencies); every other field is a column.
COLUMN_FIELDS = tuple(name for name in CONFIG_FIELDS if name not in ("tags", "depends_on"))


def config_of(
    monitor: Monitor, tags: list[str] | None = None, depends_on: list[int] | None = None
) -> dict[str, Any]:
    """The stored configuration of *monitor*, in the shape MonitorConfig takes.

    *tags* and *depends_on*, when the caller has loaded them already (a
    listing), save a query each.
    """
    config = {name: getattr(monitor, name) for name in COLUMN_FIELDS}
    config.update(type_defaults_missing(monitor.type, config))
    config["tags"] = tags_of(monitor.id) if tags is None else tags
    config["depends_on"] = (
        dependencies.parents_of(monitor.id) if depends_on is None else sorted(depends_on)
    )
    return config


MAX_ID = INT64_MAX  # ids are 64-bit; a larger one cannot exist (nor be bound in SQLite)


_OWNED = Prepared(
    lambda monitor_id, team_id: (
        Monitor.select().where((Monitor.id == monitor_id) & (Monitor.team == team_id)).limit(1)
    )
)


def get_owned(acting: Acting, monitor_id: int) -> Monitor:
    if not 0 < monitor_id <= MAX_ID:
        raise monitor_not_found()
    monitor = _OWNED.first(monitor_id, acting.team_id)
    if monitor is None:
        raise monitor_not_found()
    return monitor


@dataclass(frozen=True)
class Filters:
    status: str | None = None
    type: str | None = None
    search: str = ""
    tags: tuple[str, ...] = ()  # monitors carrying all of them


@dataclass(frozen=True)
class Listing:
    """One page of a team's monitors (``SUMMARY_COLUMNS`` by name, the status
    shown), with their 24-hour uptime, their tags, and the ancestors that
    block each (empty: not blocked)."""

    rows: list[dict[str, Any]]
    total: int
    uptime: dict[int, dict[str, float | None]]
    tags: dict[int, list[str]]
    blocked_by: dict[int, list[int]]


# Only the summary's columns, as dicts: building full rows costs more than the query.
SUMMARY_COLUMNS = (
    "id",
    "team",
    "name",
    "url",
    "type",
    "status",
    "flapping_since",
    "paused",
    "response_time",
    "status_code",
    "last_check",
    "query_name",
    "record_type",
    "rollup_version",  # the key of its cached uptime figure
)
_SUMMARY = [getattr(Monitor, name) for name in SUMMARY_COLUMNS]

# The list without filters, the one a dashboard polls: statements built once
# (re-measured: bench/README.md#second-copies-re-measured-issue-30).
_COUNT_ALL = Prepared(
    lambda team_id: Monitor.select(fn.COUNT(Monitor.id)).where(Monitor.team == team_id).tuples()
)
_PAGE_ALL = Prepared(
    lambda team_id, size, offset: (
        Monitor.select(*_SUMMARY)
        .where(Monitor.team == team_id)
        .order_by(Monitor.id)
        .limit(size)
        .offset(offset)
        .dicts()
    )
)


def list_monitors(
    acting: Acting, filters: Filters, *, page: int, limit: int, now: datetime
) -> Listing:
    in_maintenance = maintenance_windows.active_monitor_ids(now, [acting.team_id])
    # A page past the end is answered without asking the database for an
    # offset that may not even fit its integer type.
    offset = (page - 1) * limit
    rows: list[dict[str, Any]] = []
    if filters == Filters():
        (total,) = _COUNT_ALL.first(acting.team_id)  # type: ignore[misc]
        if offset < total:
            rows = _PAGE_ALL.rows(acting.team_id, limit, offset)
    else:
        query = _filtered(acting, filters, list(in_maintenance))
        total = query.count()
        if offset < total:
            rows = list(query.order_by(Monitor.id).paginate(page, limit).dicts())
    for row in rows:
        if row["id"] in in_maintenance:
            row["status"] = "maintenance"  # as show_maintenance does
    ids = [row["id"] for row in rows]
    versions = {row["id"]: row["rollup_version"] for row in rows}
    uptime = uptime_cache.uptime(versions, now, windows=("24h",))
    blocked_by = dependencies.blocked_of(acting.team_id, ids) if ids else {}
    return Listing(rows, total, uptime, tags_by_monitor(ids), blocked_by)


def _filtered(acting: Acting, filters: Filters, in_maintenance: list[int]) -> Any:
    query = Monitor.select(*_SUMMARY).where(Monitor.team == acting.team_id)
    if filters.status == "maintenance":
        query = query.where(Monitor.id.in_(in_maintenance))
    elif filters.status:
        # A monitor in maintenance shows (and is filtered as) maintenance only.
        query = query.where((Monitor.status == filters.status) & Monitor.id.not_in(in_maintenance))
    if filters.type:
        query = query.where(Monitor.type == filters.type)
    if search := filters.search:
        query = query.where(_like(Monitor.name, search) | _like(Monitor.url, search))
    if filters.tags:
        query = query.where(having_all(Monitor.id, filters.tags))
    return query


def show_maintenance(rows: Iterable[Monitor], in_maintenance: set[int]) -> None:
    """The status shown of monitors in a maintenance window is ``maintenance``.

    The stored status stays the checks' own (the state logic reads it); the
    window decides what is shown, from the moment it opens to the moment it
    closes (docs/maintenance.md).
    """
    for m in rows:
        if m.id in in_maintenance:
            m.status = "maintenance"


def ids_tagged(acting: Acting, tags: list[str]) -> list[int]:
    """The ids of the team's monitors carrying every one of *tags*, in id order."""
    query = Monitor.select(Monitor.id).where(
        (Monitor.team == acting.team_id) & having_all(Monitor.id, tags)
    )
    return [mid for (mid,) in query.order_by(Monitor.id).tuples()]


def _like(expr: Any, needle: str) -> Any:
    escaped = needle.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return NodeList((fn.LOWER(expr), SQL("LIKE"), f"%{escaped}%", SQL("ESCAPE '\\'")))


def figures(monitor: Monitor, *, now: datetime, settings: Settings) -> dict[str, Any]:
    """What the API shows beside the row: uptime per window, the next check, the
    tags, and for a heartbeat its ping URL, deadline and last ping."""
    slots = _SLOTS.rows(monitor.id)
    due = _next_due(monitor, [slot[1] for slot in slots])
    heartbeat = monitor.type == "heartbeat"
    depends_on, blocked_by = dependencies.detail(monitor.id, monitor.team_id)
    return {
        "depends_on": depends_on,
        "blocked": bool(blocked_by),
        "blocked_by": blocked_by,
        "uptime": uptime_cache.uptime({monitor.id: monitor.rollup_version}, now)[monitor.id],
        "next_check_at": due,
        "locations_status": location_states(monitor, slots, now=now),
        "tags": tags_of(monitor.id),
        "ping_url": ping_url(monitor, settings) if heartbeat else None,
        "next_deadline": due if heartbeat else None,
        "last_ping": last_ping(monitor) if heartbeat else None,
    }


def ping_url(monitor: Monitor, settings: Settings) -> str | None:
    token = ping_tokens.unseal(monitor.ping_token_sealed, settings.secret_key)
    return ping_tokens.ping_url(settings.base_url, token)


def last_ping(monitor: Monitor) -> CheckRun | None:
    """The monitor's latest ping (an indexed read of its newest history entries)."""
    return (
        CheckRun.select()
        .where((CheckRun.monitor == monitor.id) & CheckRun.kind.is_null(False))
        .order_by(CheckRun.checked_at.desc(), CheckRun.id.desc())
        .first()
    )


def _token_columns(settings: Settings) -> dict[str, str]:
    """A fresh ping token, as stored: its hash (the lookup key) and sealed copy."""
    token = ping_tokens.new_token()
    return {
        "ping_token_hash": ping_tokens.token_hash(token),
        "ping_token_sealed": ping_tokens.seal(token, settings.secret_key),
    }


def rotate_ping_token(
    acting: Acting, monitor: Monitor, *, now: datetime, settings: Settings
) -> Monitor:
    """A new ping token for a heartbeat monitor; the old one stops working at once."""
    if monitor.type != "heartbeat":
        raise ApiError("MONITOR_TYPE_NOT_SUPPORTED", "Only heartbeat monitors have a ping token")
    with write_tx():
        owned = (Monitor.id == monitor.id) & (Monitor.team == monitor.team_id)
        if not Monitor.update(updated_at=now, **_token_columns(settings)).where(owned).execute():
            raise monitor_not_found()
        audit.record(acting, "monitor.ping_token", "monitor", monitor.id, _named(monitor), at=now)
    return Monitor.get_by_id(monitor.id)


def _first_due(monitor: Any, now: datetime, since: datetime | None = None) -> datetime:
    """When a new (or restarted) scheduling row is first due: now, or a heartbeat's deadline.

    *monitor*: a row, or a mapping of its columns. A heartbeat counts from
    *since* (its last success; default now): before any ping the first
    deadline is created_at + period (or the first cron fire after it) + grace.
    Computed before the write transaction that stores it: no schedule is
    evaluated while the write lock is held.
    """
    kind = monitor.get("type") if isinstance(monitor, dict) else monitor.type
    if kind != "heartbeat":
        return now
    return HeartbeatSchedule.of(monitor).first_deadline(since or now, now)


def check_runs(monitor: Monitor, *, since: datetime, until: datetime, limit: int) -> list[CheckRun]:
    """The monitor's runs checked in [since, until], newest first, at most *limit*."""
    return list(
        CheckRun.select()
        .where(
            (CheckRun.monitor == monitor.id)
            & (CheckRun.checked_at >= since)
            & (CheckRun.checked_at <= until)
        )
        .order_by(CheckRun.checked_at.desc(), CheckRun.id.desc())
        .limit(limit)
    )


def create_monitor(
    acting: Acting,
    cfg: MonitorConfig,
    *,
    now: datetime,
    settings: Settings,
    audited: bool = True,
) -> Monitor:
    """A new monitor of the team; *audited* False: the caller writes its own line (apply)."""
    columns = cfg.model_dump()
    first_due = _first_due(columns, now)
    with write_tx():
        lock_team(acting.team_id)
        count = Monitor.select(fn.COUNT(Monitor.id)).where(Monitor.team == acting.team_id).scalar()
        if count >= settings.max_monitors_per_team:
            raise ApiError(
                "QUOTA_EXCEEDED",
                f"Monitor limit reached ({settings.max_monitors_per_team} per team)",
                {"limit": [str(settings.max_monitors_per_team)]},
            )
        tags = columns.pop("tags")
        depends_on = columns.pop("depends_on")
        _check_key_free(acting.team_id, cfg.key, None)
        token = _token_columns(settings) if cfg.type == "heartbeat" else {}
        monitor = Monitor.create(
            user=acting.user_id,
            team=acting.team_id,
            status="pending",
            created_at=now,
            updated_at=now,
            badge_token=new_token() if cfg.badges else None,
            **columns,
            **token,
        )
        replace_tags(monitor.id, tags)
        if depends_on:
            dependencies.store(acting.team_id, {monitor.id: depends_on})
        AlertSettings.create(monitor=monitor)
        _sync_locations(monitor, first_due)
        if audited:
            audit.record(acting, "monitor.create", "monitor", monitor.id, _named(monitor), at=now)
    render_purges.forget_pages_of([acting.team_id])  # a page may show it already, by tag
    return monitor


def _named(monitor: Monitor, **details: Any) -> dict[str, Any]:
    """An audit line's details: the monitor's name and type (never its URL: it may
    carry credentials), with *details*."""
    return {"name": monitor.name, "type": monitor.type, **details}


def _bulk(bulk: bool) -> dict[str, Any]:
    return {"bulk": True} if bulk else {}


def update_monitor(
    acting: Acting,
    monitor: Monitor,
    cfg: MonitorConfig,
    *,
    now: datetime,
    settings: Settings,
    audited: bool = True,
    bulk: bool = False,
) -> Monitor:
    """Write an edit of *monitor* (as read for it) and return the monitor as it now is.

    Only the configuration columns that change are written, with
    ``updated_at``, guarded by the id and owner: the engine may have written
    the state columns (status, counters, ``offline_since``, ``state_version``,
    a pause) since the row was read, and writing the read copy back would
    undo that. A monitor deleted meanwhile is MONITOR_NOT_FOUND. The audit
    line (unless *audited* is False) names the changed fields, never values.
    """
    current = config_of(monitor)
    changes = {k: v for k, v in cfg.model_dump().items() if current[k] != v}
    if not changes:
        return monitor
    fields = sorted(changes)
    tags = changes.pop("tags", None)
    depends_on = changes.pop("depends_on", None)
    new_type = changes.get("type", monitor.type)
    type_moved = (monitor.type in CHECKED_TYPES) != (new_type in CHECKED_TYPES) or (
        monitor.type in PASSIVE_TYPES
    ) != (new_type in PASSIVE_TYPES)
    if new_type == "heartbeat" and not monitor.ping_token_hash:
        changes.update(_token_columns(settings))
    after = {**current, **cfg.model_dump(), "id": monitor.id}
    first_due = _first_due(after, now)
    due = None
    if new_type == "heartbeat" and (type_moved or _SCHEDULE_FIELDS & changes.keys()):
        # A new schedule counts from the last success (or creation).
        due = _first_due(after, now, monitor.last_success or monitor.created_at)
    elif type_moved:
        due = now  # no longer waiting for a heartbeat's deadline: checked at once
    with write_tx():
        if "key" in changes:
            lock_team(monitor.team_id)
            _check_key_free(monitor.team_id, cfg.key, monitor.id)
        owned = (Monitor.id == monitor.id) & (Monitor.team == monitor.team_id)
        if not Monitor.update(updated_at=now, **changes).where(owned).execute():
            raise monitor_not_found()
        if tags is not None:
            replace_tags(monitor.id, tags)
        if depends_on is not None:
            dependencies.store(monitor.team_id, {monitor.id: depends_on})
        if type_moved:
            # A monitor that moves to or from a checked type starts over. A
            # state write like the engine's: the version moves on from the
            # stored one, not from the copy read for the edit.
            Monitor.update(
                status="pending",
                consecutive_failures=0,
                state_version=Monitor.state_version + 1,
            ).where(Monitor.id == monitor.id).execute()
            # An unchecked type can never recover: close its incident now.
            resolve_active_incident(monitor.id, now=now)
        ensure_token(Monitor.get_by_id(monitor.id))
        fresh = Monitor.get_by_id(monitor.id)
        _sync_locations(fresh, first_due, interval_changed="check_interval" in changes)
        if due is not None and fresh.last_success == monitor.last_success:
            # (A ping recorded since the read has set the deadline already.)
            MonitorLocation.update(next_check_at=due).where(
                MonitorLocation.monitor == fresh.id
            ).execute()
        if audited:
            details = _named(fresh, fields=fields, **_bulk(bulk))
            audit.record(acting, "monitor.update", "monitor", monitor.id, details, at=now)
    render_purges.forget_monitors([monitor])  # its token as read: badges may be off now
    return fresh


def _check_key_free(team_id: int, key: str | None, monitor_id: int | None) -> None:
    """VALIDATION_ERROR when another of the team's monitors has *key* already."""
    if key is None:
        return
    taken = Monitor.select(Monitor.id).where(
        (Monitor.team == team_id) & (Monitor.key == key) & (Monitor.id != (monitor_id or 0))
    )
    holder = taken.scalar()
    if holder is not None:
        raise validation_error({"key": [f"is already the key of monitor {holder}"]})


_SCHEDULE_FIELDS = {"period", "grace", "cron", "timezone"}


def _sync_locations(
    monitor: Monitor, first_due: datetime, *, interval_changed: bool = False
) -> None:
    """Keep one scheduling row per configured location (a new one first due at *first_due*:
    now, or a heartbeat's deadline, computed before the transaction)."""
    wanted = set(monitor.locations) if monitor.checks_supported else set()
    existing = {
        row.location: row
        for row in MonitorLocation.select().where(MonitorLocation.monitor == monitor)
    }
    stale = [loc for loc in existing if loc not in wanted]
    if stale:
        MonitorLocation.delete().where(
            (MonitorLocation.monitor == monitor) & (MonitorLocation.location.in_(stale))
        ).execute()
    for loc in sorted(wanted - set(existing)):
        MonitorLocation.create(monitor=monitor, location=loc, next_check_at=first_due)
    if interval_changed and monitor.type != "heartbeat":
        # A shorter interval takes effect now rather than after the old one
        # (first_due is now for a type that is not a heartbeat).
        latest = first_due + timedelta(seconds=monitor.check_interval)
        MonitorLocation.update(next_check_at=latest).where(
            (MonitorLocation.monitor == monitor) & (MonitorLocation.next_check_at > latest)
        ).execute()


def _set_paused(monitor: Monitor, paused: bool, *, now: datetime, **values: Any) -> bool:
    """Flip the paused flag (and set *values*) if it is not so already; whether it flipped.

    A new ``state_version`` tells the engine that results computed before the
    flip are stale.
    """
    return bool(
        Monitor.update(
            paused=paused, updated_at=now, state_version=Monitor.state_version + 1, **values
        )
        .where((Monitor.id == monitor.id) & (Monitor.paused == (not paused)))
        .execute()
    )


def pause_monitor(
    acting: Acting, monitor: Monitor, reason: str | None, *, now: datetime, bulk: bool = False
) -> Monitor:
    with write_tx():
        if not _set_paused(monitor, True, now=now, paused_at=now, pause_reason=reason):
            raise ApiError("MONITOR_ALREADY_PAUSED", "Monitor is already paused")
        resolve_active_incident(monitor.id, now=now)
        MonitorLocation.update(lease_owner=None, lease_expires_at=None).where(
            MonitorLocation.monitor == monitor.id
        ).execute()
        details = _named(monitor, **_bulk(bulk))
        audit.record(acting, "monitor.pause", "monitor", monitor.id, details, at=now)
    render_purges.forget_monitors([monitor])
    return Monitor.get_by_id(monitor.id)


def resume_monitor(
    acting: Acting, monitor: Monitor, *, now: datetime, bulk: bool = False
) -> Monitor:
    due = _first_due(monitor, now)
    with write_tx():
        # A resumed monitor starts over: pending until its first check.
        fresh = {
            "status": "pending",
            "consecutive_failures": 0,
            "alerts_suppressed": False,
            "round_locations": [],
            "round_started_at": None,
        }
        if not _set_paused(monitor, False, now=now, paused_at=None, pause_reason=None, **fresh):
            raise ApiError("MONITOR_NOT_PAUSED", "Monitor is not paused")
        MonitorLocation.update(next_check_at=due, last_status=None).where(
            MonitorLocation.monitor == monitor.id
        ).execute()
        details = _named(monitor, **_bulk(bulk))
        audit.record(acting, "monitor.resume", "monitor", monitor.id, details, at=now)
    render_purges.forget_monitors([monitor])
    return Monitor.get_by_id(monitor.id)


def resolve_active_incident(monitor_id: int, *, now: datetime) -> int:
    """Resolve the monitor's active downtime notification without any email."""
    active = Notification.get_or_none(
        (Notification.monitor == monitor_id)
        & (Notification.status == "active")
        & (Notification.type == "downtime")
    )
    if active is None:
        return 0
    return int(active.resolve_if_active(now))


def delete_monitor(
    acting: Acting,
    monitor: Monitor,
    *,
    now: datetime,
    audited: bool = True,
    bulk: bool = False,
) -> None:
    # Foreign keys cascade to locations, alert settings, runs, roll-ups,
    # notifications and their outbox rows.
    with write_tx():
        if Monitor.delete().where(Monitor.id == monitor.id).execute() and audited:
            details = _named(monitor, **_bulk(bulk))
            audit.record(acting, "monitor.delete", "monitor", monitor.id, details, at=now)
    render_purges.forget_monitors([monitor])


# Read on every GET of a monitor: its SQL built once (db.Prepared).
_SLOTS = Prepared(
    lambda monitor_id: (
        MonitorLocation.select(
            MonitorLocation.location,
            MonitorLocation.next_check_at,
            MonitorLocation.last_status,
            MonitorLocation.last_checked_at,
        )
        .where(MonitorLocation.monitor == monitor_id)
        .tuples()
    )
)


def _next_due(monitor: Monitor, due_times: list[datetime | None]) -> datetime | None:
    """``next_check_at`` from the scheduling rows' due times, already read."""
    if monitor.paused or not monitor.checks_supported:
        return None
    return min((t for t in due_times if t is not None), default=None)


def location_states(
    monitor: Monitor,
    slots: list[tuple[str, datetime | None, str | None, datetime | None]],
    *,
    now: datetime,
) -> list[dict[str, Any]]:
    """Each configured location's latest run and whether it is stale (checks/quorum.py).

    *slots*: (location, next_check_at, last_status, last_checked_at) rows.
    Only checked monitors age: a heartbeat's one location is never stale.
    """
    by_location = {loc: (status, at) for loc, _due, status, at in slots}
    reports = {
        loc: quorum.LocationReport(status, at)
        for loc, (status, at) in by_location.items()
        if status is not None
    }
    interval = monitor.check_interval if monitor.checks_supported else None
    opened = monitor.round_started_at if monitor.round_locations else None
    _fresh, _awaited, stale = quorum.split_fresh(
        reports, monitor.locations, now=now, interval=interval, round_started_at=opened
    )
    states = []
    for loc in monitor.locations:
        status, at = by_location.get(loc, (None, None))
        states.append(
            {
                "location": loc,
                "status": status,
                "checked_at": at if status is not None else None,
                "stale": loc in stale,
            }
        )
    return states


def bulk_action(
    acting: Acting,
    action: str,
    ids: list[int],
    *,
    reason: str | None,
    patch: dict[str, Any] | None,
    now: datetime,
    settings: Settings,
) -> dict[str, Any]:
    """Apply one action to many monitors; report per-id success or failure.

    For ``update``, every owned monitor's merged configuration is validated
    first; one invalid result fails the whole request before anything changes.
    """
    owned = {
        m.id: m
        for m in Monitor.select().where((Monitor.team == acting.team_id) & Monitor.id.in_(ids))
    }
    configs = _bulk_configs(owned, patch or {}, settings) if action == "update" else {}
    succeeded: list[int] = []
    failed: list[dict[str, Any]] = []
    for mid in ids:
        monitor = owned.get(mid)
        try:
            if monitor is None:
                raise monitor_not_found()
            if action == "pause":
                pause_monitor(acting, monitor, reason, now=now, bulk=True)
            elif action == "resume":
                resume_monitor(acting, monitor, now=now, bulk=True)
            elif action == "delete":
                delete_monitor(acting, monitor, now=now, bulk=True)
            else:
                update_monitor(acting, monitor, configs[mid], now=now, settings=settings, bulk=True)
            succeeded.append(mid)
        except ApiError as exc:
            failed.append({"id": mid, "error": {"code": exc.code, "message": exc.message}})
    return {"succeeded": succeeded, "failed": failed}


def _bulk_configs(
    owned: dict[int, Monitor], patch: dict[str, Any], settings: Settings
) -> dict[int, MonitorConfig]:
    """Every owned monitor's configuration after *patch*, or one VALIDATION_ERROR.

    The fields are checked on their own first, so a bad ``settings`` fails
    even when no id is the caller's.
    """
    try:
        check_patch_fields(patch, settings)
        return {
            mid: parse_monitor_update(config_of(m), patch, settings) for mid, m in owned.items()
        }
    except ApiError as exc:
        exc.details = {f"settings.{k}": v for k, v in exc.details.items()}
        raise


ALERT_FIELDS = tuple(AlertSettingsIn.model_fields)


def alert_settings(monitor: Monitor) -> AlertSettings:
    # Every monitor gets its row on create; one missing (inserted by hand or
    # an import) reads as the defaults rather than failing.
    row = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id)
    return row or AlertSettings(monitor=monitor.id)


def update_alert_settings(
    acting: Acting, monitor: Monitor, patch: Any, *, now: datetime
) -> AlertSettings:
    """Merge *patch* into the stored settings, validate the whole, and store it.

    The audit line (``monitor.alerts``) names the settings that changed, if any.
    """
    stored = alert_settings(monitor)
    if isinstance(patch, dict):
        # Read-only, shown by GET: a GET body sent back as a PUT still works.
        patch = {k: v for k, v in patch.items() if k != "effective_min_failed_locations"}
    before = {k: getattr(stored, k) for k in ALERT_FIELDS}
    new = parse_alert_settings(before, patch)
    if details := quorum_errors(new, monitor.locations):
        raise validation_error(details)
    fields = audit.changed_fields(before, new.model_dump())
    with write_tx():
        store_alert_settings(monitor, new)
        if fields:
            details = _named(monitor, fields=fields)
            audit.record(acting, "monitor.alerts", "monitor", monitor.id, details, at=now)
    return alert_settings(monitor)


def store_alert_settings(monitor: Monitor, new: AlertSettingsIn) -> None:
    """Write the whole of *new* as the monitor's alert settings.

    Its ``channel_ids`` must name the owner's channels (checked here, so
    ``apply`` and single updates refuse the same ids).
    """
    channel_service.check_channel_ids(monitor.team_id, new.channel_ids)
    before = AlertSettings.get_or_none(AlertSettings.monitor == monitor.id)
    previous = before.reminder_interval if before is not None else None
    preserve = [getattr(AlertSettings, k) for k in ALERT_FIELDS]
    with write_tx():
        AlertSettings.insert(monitor=monitor.id, **new.model_dump()).on_conflict(
            conflict_target=[AlertSettings.monitor], preserve=preserve
        ).execute()
        if new.reminder_interval != previous:
            reminders.reschedule(monitor.id, new.reminder_interval)


def rotate_badge_token(acting: Acting, monitor: Monitor, *, now: datetime) -> Monitor:
    """A new badge token for *monitor*; the old one stops working at once. Badges must be on."""
    if not monitor.badges:
        raise ApiError(
            "VALIDATION_ERROR",
            "Badges are off for this monitor: turn them on with badges: true first",
            {"badges": ["must be true to rotate the badge token"]},
        )
    with write_tx():
        Monitor.update(badge_token=new_token(), updated_at=now).where(
            Monitor.id == monitor.id
        ).execute()
        audit.record(acting, "monitor.badge_token", "monitor", monitor.id, _named(monitor), at=now)
    render_purges.forget_badges([monitor.badge_token])
    return Monitor.get_by_id(monitor.id)
