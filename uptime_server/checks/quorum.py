"""Pure rules of a monitor checked from several locations (docs/alerts.md#locations).

No database, no clock: every answer is a function of the arguments.

**Fresh.** A location's latest run counts while it is no older than
``STALE_FACTOR`` (1.5) × the monitor's interval at the moment of evaluation;
after that the location is *stale* and left out: neither failing nor passing.
A run that must not count (an agent whose own uplink fails) does not update
its location, which then simply goes stale. A location with no run yet (a new
monitor, a location just added, a resumed monitor) is *awaited* while the
open round is no older than 1.5 × the interval, and stale after that.

**Quorum.** Of the fresh locations, at least ``min_failed_locations``
offline → offline; some offline but fewer → warning; none offline → the
worst of the others (warning if any is, else online). The setting defaults
to a majority of the monitor's locations, ``n // 2 + 1``, and is capped at
``n`` should the monitor lose locations after it was set. Stale locations do
not lower it: with fewer fresh locations than the quorum, the monitor can at
most be warning.

**Round.** A round opens with the first run after the previous one closed,
and closes at the run after which every fresh or awaited location has
reported in it; only then does the monitor's
status move (and ``alert_threshold``, ``recovery_threshold`` and flapping
count it once). A location that reports twice in an open round only replaces
its own latest status; one that stops reporting goes stale and stops holding
the round open. With one location every run closes a round.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

STALE_FACTOR = 1.5


@dataclass(frozen=True)
class LocationReport:
    """A location's latest counted run: its status and when it was checked.

    ``checked_at`` None: the time is unknown, and the report counts as fresh.
    """

    status: str
    checked_at: datetime | None = None


def is_fresh(checked_at: datetime | None, *, now: datetime | None, interval: int | None) -> bool:
    """Whether a run checked at *checked_at* still counts at *now*.

    Without *now* or *interval* there is nothing to age it by: it counts.
    """
    if checked_at is None or now is None or interval is None:
        return True
    return now - checked_at <= timedelta(seconds=STALE_FACTOR * interval)


def majority(locations: int) -> int:
    """The default quorum: a majority of *locations* (1 for one location)."""
    return locations // 2 + 1


def min_failed(setting: int | None, locations: int) -> int:
    """The quorum in force: *setting* (default a majority), between 1 and *locations*."""
    wanted = majority(locations) if setting is None else setting
    return max(1, min(wanted, max(locations, 1)))


def quorum_status(statuses: Sequence[str], min_failed_locations: int) -> str:
    """The monitor's status from the fresh locations' latest statuses."""
    if not statuses:
        return "pending"
    failing = sum(1 for s in statuses if s == "offline")
    if failing >= min_failed_locations:
        return "offline"
    if failing or any(s != "online" for s in statuses):
        return "warning"
    return "online"


@dataclass(frozen=True)
class Round:
    """Where the monitor's current round stands after a run."""

    fresh: dict[str, str]  # fresh location → its latest status, in configured order
    stale: tuple[str, ...]  # configured locations left out, in configured order
    reported: tuple[str, ...]  # locations that have reported in the open round
    closed: bool
    started_at: datetime | None = None  # when the open round opened; None once closed

    def status(self, min_failed_locations: int) -> str:
        return quorum_status(list(self.fresh.values()), min_failed_locations)


def split_fresh(
    reports: Mapping[str, LocationReport],
    locations: Sequence[str],
    *,
    now: datetime | None,
    interval: int | None,
    round_started_at: datetime | None = None,
) -> tuple[dict[str, str], tuple[str, ...], tuple[str, ...]]:
    """(fresh location → status, awaited, stale), each in *locations*' order.

    *round_started_at*: when the open round opened (None: no round is open,
    so a location with no run yet is awaited).
    """
    fresh: dict[str, str] = {}
    awaited: list[str] = []
    stale: list[str] = []
    for loc in locations:
        report = reports.get(loc)
        if report is not None and is_fresh(report.checked_at, now=now, interval=interval):
            fresh[loc] = report.status
        elif report is None and is_fresh(round_started_at, now=now, interval=interval):
            awaited.append(loc)
        else:
            stale.append(loc)
    return fresh, tuple(awaited), tuple(stale)


def advance(
    reports: Mapping[str, LocationReport],
    locations: Sequence[str],
    reported: Collection[str],
    *,
    location: str,
    now: datetime | None,
    interval: int | None,
    round_started_at: datetime | None = None,
) -> Round:
    """The round after *location* reported (its report already in *reports*).

    *reported* and *round_started_at*: the locations that had reported in the
    open round before this run, and when it opened (an empty *reported*: no
    round is open, and this run opens one). A run from a location the monitor
    no longer has never closes a round.
    """
    seen = {loc for loc in reported if loc in locations}
    # A round's start unknown (a row written before it was kept): from now.
    started = (round_started_at if seen else None) or now
    fresh, awaited, stale = split_fresh(
        reports, locations, now=now, interval=interval, round_started_at=started
    )
    if location in locations:
        seen.add(location)
    closed = location in locations and set(fresh) | set(awaited) <= seen
    if closed:
        return Round(fresh=fresh, stale=stale, reported=(), closed=True)
    ordered = tuple(loc for loc in locations if loc in seen)
    opened = started if ordered else None
    return Round(fresh=fresh, stale=stale, reported=ordered, closed=False, started_at=opened)
