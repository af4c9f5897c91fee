"""What a public status page shows, built from roll-ups and incidents, never raw runs.

One page costs a fixed handful of queries whatever its history: the page's
monitors (one query), their daily roll-up rows of the last 90 days (one
primary-key range per chunk of monitors), their 30-day uptime
(``stats.figures.uptime_by_monitor``, the same figure the API shows) and
their incidents open or resolved in the last 14 days.

Privacy: a monitor appears under its group's label for it, else under its
own name only if the page sets ``show_names``, else as the group heading
(numbered when the group has several); its URL only with ``show_urls``, and
then only its scheme, host (with the port) and path (``public_url``): a
monitor's URL may carry a password or a token in its query, and this page is
public and cached by anyone. Error texts and notification messages never appear.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import peewee

from uptime_server.db import database
from uptime_server.maintenance.windows import active_monitor_ids
from uptime_server.models import Monitor, Notification, Rollup, StatusPage
from uptime_server.notify.message import redact_url
from uptime_server.services.monitors import show_maintenance
from uptime_server.services.status_pages import monitors_for_group
from uptime_server.stats.figures import uptime_by_monitor, uptime_percent
from uptime_server.stats.rollups import DAY

DAYS = 90
PAST_INCIDENT_DAYS = 14
MAX_PAST_INCIDENTS = 50

STATUS_TEXT = {
    "online": "Operational",
    "warning": "Degraded performance",
    "offline": "Down",
    "pending": "No data yet",
    "paused": "Paused",
    "maintenance": "Under maintenance",
}
BANNER_TEXT = {
    "operational": "All systems operational",
    "partial_outage": "Partial outage",
    "major_outage": "Major outage",
    "maintenance": "Under maintenance",
}


def status_text(status: str) -> str:
    """A person's words for a status, including ones this version does not know yet."""
    return STATUS_TEXT.get(status) or status.replace("_", " ").capitalize() or "Unknown"


def overall(statuses: Iterable[str]) -> str:
    """The banner: major outage when every checked monitor is down, partial when some are
    down or degraded, maintenance when some are in maintenance and none down."""
    judged = [s for s in statuses if s not in ("pending", "paused")]
    down = sum(s == "offline" for s in judged)
    if judged and down == len(judged):
        return "major_outage"
    if down or "warning" in judged:
        return "partial_outage"
    if "maintenance" in judged:
        return "maintenance"
    return "operational"


def build(page: StatusPage, now: datetime) -> dict[str, Any]:
    """The page's content: the ``PublicPage`` shape (schemas/status_pages.py)."""
    groups = [(g, monitors_for_group(page.team_id, g)) for g in page.groups]
    ids = list(dict.fromkeys(mid for _, mids in groups for mid in mids))
    monitors = {
        m.id: m
        for m in Monitor.select(
            Monitor.id, Monitor.name, Monitor.url, Monitor.status, Monitor.paused
        ).where((Monitor.team == page.team_id) & Monitor.id.in_(ids or [0]))
    }
    # A monitor in an open maintenance window shows `maintenance` (the stored
    # status stays the checks' own; docs/maintenance.md).
    show_maintenance(monitors.values(), active_monitor_ids(now, [page.team_id]))
    today = int(now.timestamp()) // DAY * DAY
    first_day = today - (DAYS - 1) * DAY
    days = [(day, _date(day)) for day in range(first_day, today + DAY, DAY)]
    daily = _daily(list(monitors), first_day, today)
    uptime = uptime_by_monitor(list(monitors), now, windows=("30d",))
    percents: dict[tuple[int, int], float | None] = {}
    names: dict[int, str] = {}
    out_groups = []
    for group, mids in groups:
        shown = [mid for mid in mids if mid in monitors]
        cards = []
        for n, mid in enumerate(shown, 1):
            m = monitors[mid]
            name = _public_name(page, group, m, n, len(shown))
            names.setdefault(mid, name)
            status = "paused" if m.paused else m.status
            card = {
                "name": name,
                "status": status,
                "status_text": status_text(status),
                "uptime_30d": uptime[mid]["30d"],
                "days": _days(days, daily.get(mid, {}), percents),
            }
            if page.show_urls:
                card["url"] = public_url(m.url)
            cards.append(card)
        out_groups.append({"heading": group["heading"], "monitors": cards})
    banner = overall(card["status"] for g in out_groups for card in g["monitors"])
    return {
        "slug": page.slug,
        "title": page.title,
        "description": page.description,
        "status": banner,
        "status_text": BANNER_TEXT[banner],
        "generated_at": now,
        "groups": out_groups,
        "incidents": _incidents(names, now),
    }


def public_url(url: str | None) -> str | None:
    """*url* as a public page shows it: scheme, host (with its port) and path only.

    No userinfo (a password), no query (tokens ride there), no fragment.
    Redacted first, so even a URL that will not split whole loses its
    password; one that will not split at all is not shown.
    """
    if not url:
        return None
    try:
        parts = urlsplit(redact_url(url))
    except ValueError:
        return None
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _public_name(page: StatusPage, group: dict, monitor: Monitor, n: int, of: int) -> str:
    label = (group.get("labels") or {}).get(str(monitor.id))
    if label:
        return label
    if page.show_names:
        return monitor.name
    return group["heading"] if of == 1 else f"{group['heading']} {n}"


def _days(
    days: list[tuple[int, str]],
    counts: dict[int, tuple[int, int]],
    percents: dict[tuple[int, int], float | None],
) -> list[dict[str, Any]]:
    """One monitor's cells; *percents* remembers each (checks, failed) pair's figure,
    since most days of most monitors repeat one."""
    cells = []
    for day, date in days:
        pair = counts.get(day, (0, 0))
        if pair not in percents:
            percents[pair] = uptime_percent(*pair)
        cells.append({"date": date, "uptime": percents[pair]})
    return cells


def _daily(ids: list[int], first_day: int, today: int) -> dict[int, dict[int, tuple[int, int]]]:
    """(checks, failed) by day, by monitor, from the daily roll-ups; today's row is current."""
    out: dict[int, dict[int, tuple[int, int]]] = {}
    for chunk in peewee.chunked(ids, 200):
        query = Rollup.select(Rollup.monitor, Rollup.bucket, Rollup.checks, Rollup.failed).where(
            Rollup.monitor.in_(chunk)
            & (Rollup.resolution == DAY)
            & (Rollup.bucket >= first_day)
            & (Rollup.bucket <= today)
        )
        # Plain integers: the cursor's rows as they are, without peewee's
        # per-field conversion (9,000 rows for a page of 100 monitors).
        for mid, bucket, checks, failed in database.execute(query):
            out.setdefault(mid, {})[bucket] = (checks, failed)
    return out


def _incidents(names: dict[int, str], now: datetime) -> dict[str, list[dict[str, Any]]]:
    """Downtimes of the page's monitors open now, and those resolved in the last 14 days."""
    if not names:
        return {"open": [], "past": []}
    since = now - timedelta(days=PAST_INCIDENT_DAYS)
    rows = (
        Notification.select(
            Notification.monitor,
            Notification.status,
            Notification.started_at,
            Notification.resolved_at,
            Notification.duration,
        )
        .where(
            Notification.monitor.in_(list(names))
            & (Notification.type == "downtime")
            & ((Notification.status == "active") | (Notification.resolved_at >= since))
        )
        .order_by(Notification.started_at.desc())
        .limit(MAX_PAST_INCIDENTS + len(names))
    )
    open_, past = [], []
    for row in rows:
        item = {
            "monitor": names[row.monitor_id],
            "started_at": row.started_at,
            "resolved_at": row.resolved_at,
            "duration": row.duration,
        }
        (open_ if row.status == "active" else past).append(item)
    return {"open": open_, "past": past[:MAX_PAST_INCIDENTS]}


def _date(day: int) -> str:
    return datetime.fromtimestamp(day, UTC).strftime("%Y-%m-%d")
