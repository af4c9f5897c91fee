"""The uptime figures' one statement written as text: a UNION ALL of grouped SUMs."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

from uptime_server.db import database


def uptime_sums(
    arms: Sequence[tuple[int, int, int, int]], monitor_ids: Sequence[int]
) -> Iterator[tuple[int, int, int, int]]:
    """``(window index, monitor id, checks, failed)`` summed per arm and monitor.

    Each arm is ``(window index, resolution, first bucket, stop)``: the
    roll-up rows of *monitor_ids* in that range, a primary key range scan.
    """
    params: list[int] = []
    for _, res, lo, hi in arms:
        params += [*monitor_ids, res, lo, hi]
    sql = _uptime_sql(tuple(i for i, *_ in arms), len(monitor_ids), database.param)
    yield from database.execute_sql(sql, params)


@functools.lru_cache(maxsize=64)
def _uptime_sql(arms: tuple[int, ...], ids: int, param: str) -> str:
    """``uptime_sums``' UNION ALL for *ids* monitors, one arm per window index.

    Its text depends on the shape of the question only (windows, ranges and
    the chunk's length), so it is written once, not built by peewee on every
    request; the values go as parameters: each arm's ids, resolution, lo, hi.
    """
    ids_in = ", ".join([param] * ids)
    arm = (
        'SELECT {i}, "t1"."monitor_id", SUM("t1"."checks"), SUM("t1"."failed") '
        f'FROM "rollups" AS "t1" WHERE "t1"."monitor_id" IN ({ids_in}) '
        f'AND "t1"."resolution" = {param} AND "t1"."bucket" >= {param} '
        f'AND "t1"."bucket" < {param} GROUP BY "t1"."monitor_id"'
    )
    return " UNION ALL ".join(arm.format(i=int(i)) for i in arms)
