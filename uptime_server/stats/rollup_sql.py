"""The roll-ups' many-row statements (``db.bulk``), from one column list.

A row of each holds ``UPDATED_COLUMNS`` of a cell, then its key (monitor,
resolution, bucket): the order ``rollups._row`` builds.
"""

from __future__ import annotations

from uptime_server.db.bulk import Insert, Update

UPDATED_COLUMNS = ("checks", "failed", "rt_count", "rt_sum", "rt_min", "rt_max", "p95", "hist")
KEY_COLUMNS = ("monitor_id", "resolution", "bucket")

INSERT_ROW = Insert("rollups", (*UPDATED_COLUMNS, *KEY_COLUMNS))
# PostgreSQL: insert-or-ignore, safe under races; each row inserted gives its key back.
INSERT_NEW = Insert(
    "rollups", (*UPDATED_COLUMNS, *KEY_COLUMNS), "ON CONFLICT DO NOTHING", KEY_COLUMNS
)
# Found by primary key, a few index seeks, never a scan of the ever-growing table.
UPDATE_ROW = Update("rollups", UPDATED_COLUMNS, KEY_COLUMNS)

BUMP_VERSION = Update("monitors", ("rollup_version = rollup_version + 1",), ("id",))
