"""What each badge says: a label, a message and a shields.io colour, from roll-ups.

``status``: the monitor's current status. ``uptime-{24h,7d,30d,90d}``: the
uptime % of that window, the figure the stats API gives. ``response-time``:
the mean response time of the passed runs of the last 24 hours.
"""

from __future__ import annotations

from datetime import datetime

from uptime_server.maintenance.windows import active_monitor_ids
from uptime_server.models import Monitor
from uptime_server.stats.figures import PERIODS, uptime_by_monitor, window, window_total
from uptime_server.web.rendering import percent

BRIGHTGREEN, GREEN, YELLOWGREEN, YELLOW = "#4c1", "#97ca00", "#a4a61d", "#dfb317"
ORANGE, RED, GREY, BLUE = "#fe7d37", "#e05d44", "#9f9f9f", "#007ec6"

KINDS = ("status", "uptime-24h", "uptime-7d", "uptime-30d", "uptime-90d", "response-time")
_STATUS = {
    "online": ("up", BRIGHTGREEN),
    "warning": ("degraded", YELLOW),
    "offline": ("down", RED),
    "pending": ("pending", GREY),
    "paused": ("paused", GREY),
    "maintenance": ("maintenance", BLUE),
}
# (lowest uptime %, colour), best first.
_UPTIME_COLOURS = ((99.9, BRIGHTGREEN), (99.0, GREEN), (97.0, YELLOWGREEN), (95.0, YELLOW))
# (below this many ms, colour), fastest first.
_SPEED_COLOURS = ((200, BRIGHTGREEN), (500, GREEN), (1000, YELLOW), (2000, ORANGE))


def figure(monitor: Monitor, kind: str, now: datetime) -> tuple[str, str, str]:
    if kind == "status":
        status = "paused" if monitor.paused else monitor.status
        if not monitor.paused and monitor.id in active_monitor_ids(now, [monitor.team_id]):
            status = "maintenance"
        message, colour = _STATUS.get(status, (status.replace("_", " "), GREY))
        return "status", message, colour
    if kind == "response-time":
        total = window_total(monitor.id, window(PERIODS["24h"], now))
        if not total.rt_count:
            return "response time", "no data", GREY
        ms = round(total.rt_sum / total.rt_count)
        colour = next((c for limit, c in _SPEED_COLOURS if ms < limit), RED)
        return "response time", f"{ms} ms", colour
    period = kind.removeprefix("uptime-")
    value = uptime_by_monitor([monitor.id], now, windows=(period,))[monitor.id][period]
    if value is None:
        return f"uptime {period}", "no data", GREY
    colour = next((c for low, c in _UPTIME_COLOURS if value >= low), ORANGE if value >= 90 else RED)
    return f"uptime {period}", percent(value), colour
