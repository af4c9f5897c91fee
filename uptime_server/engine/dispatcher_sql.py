"""The dispatcher's many-row statements (``db.bulk``)."""

from __future__ import annotations

from uptime_server.db.bulk import Update

# Only the holder of a lease gives it back; a NULL due time leaves the schedule.
# A row: (next due time or None, monitor id, location, lease owner).
GIVE_BACK = Update(
    "monitor_locations",
    (
        "next_check_at = COALESCE(?, next_check_at)",
        "lease_owner = NULL",
        "lease_expires_at = NULL",
    ),
    ("monitor_id", "location", "lease_owner"),
)
