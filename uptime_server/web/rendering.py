"""Jinja2 rendering of status pages and badges, and the page's Content-Security-Policy.

The page has no script and no style attribute; its one inline ``<style>`` is
allowed by its SHA-256 in the policy, computed from the stylesheet as it is
embedded, so the policy and the page cannot drift apart. Everything else is
refused (``default-src 'none'``): the page makes no request of its own.
"""

from __future__ import annotations

import base64
import hashlib
import math
from functools import cache
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from uptime_server.clock import isoformat

_TEMPLATES = files("uptime_server.web") / "templates"
CSS = (_TEMPLATES / "status.css").read_text(encoding="utf-8").strip()
_CSS_HASH = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
KNOWN_STATES = ("online", "warning", "offline", "maintenance")


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("uptime_server.web", "templates"),
        autoescape=select_autoescape(["html", "svg"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        css=Markup(CSS),
        known_states=KNOWN_STATES,
        bar_cells=bar_cells,
        percent=percent,
        iso=isoformat,
        when=lambda dt: dt.strftime("%Y-%m-%d %H:%M UTC"),
        span=span,
    )
    return env


def cell_class(uptime: float | None) -> str:
    """A day's colour: full, nearly (>= 99 %), so-so (>= 95 %), bad, or no data."""
    if uptime is None:
        return "u-none"
    if uptime >= 100:
        return "u-100"
    if uptime >= 99:
        return "u-99"
    return "u-95" if uptime >= 95 else "u-low"


def percent(value: float) -> str:
    """Down to two decimals, never rounded up to a 100 % it did not reach."""
    if value >= 100:
        return "100%"
    return f"{math.floor(value * 100) / 100:.2f}%"


def span(seconds: int | None) -> str:
    if seconds is None:
        return "—"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def status_page_html(content: dict[str, Any]) -> str:
    return environment().get_template("status.html").render(page=content)


def bar_cells(days: list[dict[str, Any]]) -> Markup:
    """The ``<li>`` cells of one 90-day bar, made here rather than by the template.

    A page of 100 monitors has 9,000 cells; joining their text in Python is
    several times faster than a template loop. Every part is ours (a class
    name, an ISO date, a percentage), so there is nothing to escape.
    """
    words: dict[float | None, tuple[str, str]] = {}
    out = []
    for day in days:
        uptime = day["uptime"]
        cls, text = words.get(uptime) or words.setdefault(uptime, _cell_words(uptime))
        out.append(f'<li class="{cls}" title="{day["date"]}: {text}"></li>')
    return Markup("".join(out))


def _cell_words(uptime: float | None) -> tuple[str, str]:
    return cell_class(uptime), "no data" if uptime is None else f"{percent(uptime)} uptime"


# Verdana at 11 px, as shields.io measures: widths in px of the common
# characters, the rest taken as a wide letter so the text never overflows.
_NARROW = dict.fromkeys("il.,:;!|'", 3.1) | dict.fromkeys("fjrtI()[] ", 4.3)
_WIDE = dict.fromkeys("mwMW%", 10.3) | dict.fromkeys("ABCDEGHKNOPQRSUVXYZ", 7.6)
_DEFAULT_WIDTH = 6.9


def text_width(text: str) -> float:
    return sum(_NARROW.get(ch) or _WIDE.get(ch) or _DEFAULT_WIDTH for ch in text)


def badge_svg(label: str, message: str, color: str) -> str:
    """A shields.io "flat" badge; the texts are escaped by the template."""
    label_text, message_text = round(text_width(label)), round(text_width(message))
    label_width, message_width = label_text + 10, message_text + 10
    return (
        environment()
        .get_template("badge.svg")
        .render(
            label=label,
            message=message,
            color=color,
            width=label_width + message_width,
            label_width=label_width,
            message_width=message_width,
            label_x=label_width * 5,
            message_x=label_width * 10 + message_width * 5,
            label_text=label_text * 10,
            message_text=message_text * 10,
        )
    )
