"""Terminal charts for ``uptime monitors stats``: sparklines and bars."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from uptime_cli.output import (
    DASH,
    cell,
    duration,
    key_values,
    ms,
    pct,
    printable,
    short_when,
    when,
)

TICKS = "▁▂▃▄▅▆▇█"
BAR_WIDTH = 24
MAX_BAR_ROWS = 48
MAX_SPARK_WIDTH = 96


def resample(values: list[float | None], width: int) -> list[float | None]:
    """Average consecutive values down to at most *width* points (None = no data)."""
    if len(values) <= width:
        return list(values)
    out: list[float | None] = []
    for i in range(width):
        lo, hi = i * len(values) // width, (i + 1) * len(values) // width
        chunk = [v for v in values[lo:hi] if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return out


def sparkline(
    values: list[float | None], *, lo: float | None = None, hi: float | None = None
) -> str:
    """One block character per value, scaled between lo and hi; a gap for no data."""
    present = [v for v in values if v is not None]
    if not present:
        return " " * len(values)
    lo = min(present) if lo is None else lo
    hi = max(present) if hi is None else hi
    span = hi - lo
    chars = []
    for v in values:
        if v is None:
            chars.append(" ")
        elif span <= 0:
            chars.append(TICKS[-1])
        else:
            index = round((min(max(v, lo), hi) - lo) / span * (len(TICKS) - 1))
            chars.append(TICKS[index])
    return "".join(chars)


def bar(value: float | None, top: float, width: int = BAR_WIDTH) -> str:
    if value is None or top <= 0:
        return ""
    filled = value / top * width
    whole = int(filled)
    partial = " ▏▎▍▌▋▊▉"[int((filled - whole) * 8)] if whole < width else ""
    return ("█" * whole + partial.strip()).ljust(width)


def uptime_style(value: float | None) -> str:
    if value is None:
        return "dim"
    return "green" if value >= 100 else "yellow" if value >= 99 else "red"


def stats_view(stats: dict[str, Any], width: int = 80) -> RenderableType:
    series = stats.get("series") or []
    parts: list[RenderableType] = [summary(stats)]
    if series:
        parts += [Text(""), sparklines(series)]
    if 0 < len(series) <= MAX_BAR_ROWS:
        parts += [Text(""), bars(series, width)]
    return Group(*parts)


def summary(stats: dict[str, Any]) -> Table:
    uptime = stats.get("uptime") or {}
    rt = stats.get("response_times") or {}
    incidents = stats.get("incidents") or {}
    checks = stats.get("checks") or {}
    title = f"Statistics over {stats.get('period', DASH)} by {stats.get('granularity', DASH)}"
    return key_values(
        title,
        [
            ("Uptime", "  ".join(f"{k} {pct(uptime.get(k))}" for k in ("24h", "7d", "30d"))),
            (
                "Response time",
                f"avg {ms(rt.get('avg'))}  min {ms(rt.get('min'))}  "
                f"max {ms(rt.get('max'))}  p95 {ms(rt.get('p95'))}",
            ),
            ("Incidents", _incidents_line(incidents)),
            (
                "Checks",
                f"{checks.get('total', 0)} total, {checks.get('successful', 0)} passed, "
                f"{checks.get('failed', 0)} failed",
            ),
        ],
    )


def sparklines(series: list[dict[str, Any]]) -> Table:
    uptime = resample([b.get("uptime") for b in series], MAX_SPARK_WIDTH)
    latency = resample([b.get("avg_response_time") for b in series], MAX_SPARK_WIDTH)
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True, min_width=8)
    table.add_column(no_wrap=True)
    table.add_column(style="dim", no_wrap=True)
    table.add_row("Uptime", *uptime_sparkline(uptime))
    present = [v for v in latency if v is not None]
    span = f"{ms(min(present))}–{ms(max(present))}" if present else "no data"
    table.add_row("Response", Text(sparkline(latency, lo=0), style="cyan"), span)
    first, last = series[0].get("start"), series[-1].get("start")
    table.add_row("", Text(printable(f"{when(first)} → {when(last)}"), style="dim"), "")
    return table


def uptime_sparkline(values: list[float | None]) -> tuple[Text, str]:
    """Scaled from the worst bucket to 100% so that dips show, coloured by level."""
    present = [v for v in values if v is not None]
    if not present:
        return Text(" " * len(values)), "no data"
    lo = min(min(present), 99.0)
    line = Text()
    for value, tick in zip(values, sparkline(values, lo=lo, hi=100), strict=True):
        line.append(tick, style=uptime_style(value))
    return line, f"{pct(lo)}–100%"


def bars(series: list[dict[str, Any]], width: int = 80) -> Table:
    top_latency = max((b.get("avg_response_time") or 0 for b in series), default=0)
    # What is left of the terminal after the text columns, shared by the two bars.
    bar_width = max(8, min(BAR_WIDTH, (width - 50) // 2))
    daily = all((b.get("start") or "").endswith("T00:00:00Z") for b in series)
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("START", no_wrap=True)
    table.add_column("CHECKS", justify="right")
    table.add_column("UPTIME", no_wrap=True)
    table.add_column("", justify="right")
    table.add_column("AVG RESPONSE", no_wrap=True)
    table.add_column("", justify="right")
    for b in series:
        up = b.get("uptime")
        latency = b.get("avg_response_time")
        start = b.get("start") or ""
        table.add_row(
            cell(start[:10] if daily else short_when(start)),
            cell(b.get("checks", 0)),
            Text(bar(up, 100, bar_width), style=uptime_style(up)),
            pct(up),
            Text(bar(latency, top_latency, bar_width), style="cyan"),
            ms(latency),
        )
    return table


def _incidents_line(incidents: dict[str, Any]) -> str:
    """`1 (down 4m 12s)`; with `, 2m blocked` when some of it was a blocked monitor's."""
    down = f"down {duration(incidents.get('total_downtime'))}"
    if incidents.get("blocked_downtime"):
        down += f", {duration(incidents.get('blocked_downtime'))} blocked"
    return f"{incidents.get('count', 0)} ({down})"
