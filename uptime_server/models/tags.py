"""The tags of monitors (table ``monitor_tags``): read, replace, and select by.

A monitor's tags are a set; the API shows them sorted. The list filter and
the bulk selector ask for monitors carrying *all* of the given tags: the
monitors with as many matching rows as tags asked for, found through the
index on ``tag`` (one row per monitor and tag, so the count cannot overshoot).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from peewee import chunked, fn

from uptime_server.db import Prepared
from uptime_server.models import MonitorTag


def tags_by_monitor(monitor_ids: Iterable[int]) -> dict[int, list[str]]:
    """Each monitor's tags, sorted (every id given has an entry)."""
    ids = list(monitor_ids)
    found: dict[int, list[str]] = {mid: [] for mid in ids}
    if not ids:
        return found
    # (peewee's chunked pads every chunk to full length first: dear for a few ids)
    for chunk in [ids] if len(ids) <= _IDS_PER_QUERY else chunked(ids, _IDS_PER_QUERY):
        for mid, tag in _TAGS.rows(chunk):
            found[mid].append(tag)
    return found


_IDS_PER_QUERY = 500

# Prepared: a list page asks this for 100 ids on every request, and building
# a 100-value IN with peewee costs more than running it.
_TAGS = Prepared(
    lambda ids: (
        MonitorTag.select(MonitorTag.monitor, MonitorTag.tag)
        .where(MonitorTag.monitor.in_(ids))
        .order_by(MonitorTag.tag)
        .tuples()
    )
)


def tags_of(monitor_id: int) -> list[str]:
    return tags_by_monitor([monitor_id])[monitor_id]


def replace_tags(monitor_id: int, tags: Sequence[str]) -> None:
    """Make *tags* the monitor's tags; call inside the write transaction of the change."""
    MonitorTag.delete().where(MonitorTag.monitor == monitor_id).execute()
    if tags:
        MonitorTag.insert_many(
            [(monitor_id, tag) for tag in tags], fields=["monitor", "tag"]
        ).execute()


def having_all(monitor_id_column: Any, tags: Sequence[str]) -> Any:
    """A condition: the monitor (by its id column) carries every one of *tags*."""
    carrying = (
        MonitorTag.select(MonitorTag.monitor)
        .where(MonitorTag.tag.in_(list(tags)))
        .group_by(MonitorTag.monitor)
        .having(fn.COUNT(MonitorTag.tag) == len(set(tags)))
    )
    return monitor_id_column.in_(carrying)


def having_any(monitor_id_column: Any, tags: Sequence[str]) -> Any:
    """A condition: the monitor (by its id column) carries at least one of *tags*."""
    carrying = MonitorTag.select(MonitorTag.monitor).where(MonitorTag.tag.in_(list(tags)))
    return monitor_id_column.in_(carrying)
