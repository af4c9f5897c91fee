"""Monitor dependencies of one team: read the graph, check and store a change, who is blocked.

The graph of a team is read whole with one query (``team_parents``) and
judged by the pure functions of checks/dependencies.py. A change is checked
and written inside the write transaction of the monitor it belongs to, after
the team row is locked (``auth.teams.lock_team``): on PostgreSQL two edits of one
team's graph could otherwise each pass the cycle check against the graph
the other has not committed yet, and commit a cycle together. SQLite admits
one writer at a time already.

*Blocked* (docs/monitors.md#dependencies) is computed when shown: a list
page costs two queries (the team's edges, then the team's monitors with an
open downtime, skipped when the team has no edges), however long the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from uptime_server.auth.teams import lock_team
from uptime_server.checks import dependencies as graph
from uptime_server.db import Prepared
from uptime_server.errors import validation_error
from uptime_server.models import Monitor, MonitorDependency, Notification

Parents = dict[int, set[int]]


# Read by every list page and every monitor shown: its SQL built once (db.Prepared).
_TEAM_EDGES = Prepared(
    lambda team_id: (
        MonitorDependency.select(MonitorDependency.monitor, MonitorDependency.depends_on)
        .join(Monitor, on=(MonitorDependency.monitor == Monitor.id))
        .where(Monitor.team == team_id)
        .tuples()
    )
)


def team_parents(team_id: int) -> Parents:
    """The team's whole graph: monitor id → the ids it depends on (one query)."""
    parents: Parents = {}
    for child, parent in _TEAM_EDGES.rows(team_id):
        parents.setdefault(child, set()).add(parent)
    return parents


def parents_of(monitor_id: int) -> list[int]:
    """The ids *monitor_id* depends on, ascending."""
    query = (
        MonitorDependency.select(MonitorDependency.depends_on)
        .where(MonitorDependency.monitor == monitor_id)
        .order_by(MonitorDependency.depends_on)
        .tuples()
    )
    return [parent for (parent,) in query]


def down_ids(team_id: int) -> set[int]:
    """The team's monitors with an open downtime notification (one query)."""
    query = (
        Notification.select(Notification.monitor)
        .where(
            (Notification.team == team_id)
            & (Notification.status == "active")
            & (Notification.type == "downtime")
        )
        .tuples()
    )
    return {mid for (mid,) in query}


def unknown_message(monitor_id: int) -> str:
    # The same words for another team's monitor and for none at all: an id
    # must not tell whether it exists elsewhere.
    return f"no monitor of yours has the id {monitor_id}"


def store(team_id: int, wanted: Mapping[int, list[int]]) -> None:
    """Make *wanted* (monitor id → the ids it depends on) the stored lists, or refuse.

    Call inside the write transaction of the change, with the monitors
    created already. One VALIDATION_ERROR on ``depends_on`` names the
    problem (``problems``).
    """
    lock_team(team_id)
    errors = problems(team_id, wanted)
    if errors:
        raise validation_error({"depends_on": [next(iter(errors.values()))]})
    write(wanted)


def problems(
    team_id: int,
    wanted: Mapping[Any, list[Any]],
    *,
    label: Callable[[Any], object] = str,
    gone: Iterable[int] = (),
) -> dict[Any, str]:
    """Each changed list's problem, over the team's graph as it would be after the change.

    Refused: a monitor depending on itself, an id that is not one of the
    team's monitors, a cycle (its path named), a chain deeper than
    ``MAX_DEPTH``. *wanted* maps a node to its new list; a node is a monitor
    id, or (for a monitor not created yet, a new entry of ``apply``) any
    other key of *wanted*. *gone*: monitors the change deletes.
    """
    errors: dict[Any, str] = {}
    gone = set(gone)
    mentioned = {p for ps in wanted.values() for p in ps if isinstance(p, int)}
    known = set(_team_ids(team_id, mentioned)) - gone
    for node, ups in wanted.items():
        for parent in ups:
            if parent == node:
                errors[node] = "a monitor cannot depend on itself"
                break
            if parent not in known and (isinstance(parent, int) or parent not in wanted):
                errors[node] = unknown_message(parent)
                break
    if errors:
        return errors
    parents: dict[Any, set[Any]] = {
        child: ups for child, ups in team_parents(team_id).items() if child not in gone
    }
    parents.update((node, set(ups)) for node, ups in wanted.items())
    return graph.graph_errors(parents, list(wanted), label)


def _team_ids(team_id: int, ids: set[int]) -> list[int]:
    if not ids:
        return []
    query = Monitor.select(Monitor.id).where((Monitor.team == team_id) & Monitor.id.in_(list(ids)))
    return [mid for (mid,) in query.tuples()]


def write(wanted: Mapping[int, list[int]]) -> None:
    """Replace the stored lists of the monitors of *wanted*; inside the change's transaction."""
    if not wanted:
        return
    MonitorDependency.delete().where(MonitorDependency.monitor.in_(list(wanted))).execute()
    rows = [(child, parent) for child, ups in wanted.items() for parent in sorted(set(ups))]
    if rows:
        MonitorDependency.insert_many(rows, fields=["monitor", "depends_on"]).execute()


def blocked_of(team_id: int, ids: Iterable[int]) -> dict[int, list[int]]:
    """Each of *ids*'s ancestors that are down (empty: not blocked); two queries at most."""
    ids = list(ids)
    parents = team_parents(team_id)
    if not parents:
        return {mid: [] for mid in ids}
    down = down_ids(team_id)
    return {mid: graph.blocked_by(parents, mid, down) for mid in ids}


@dataclass(frozen=True)
class Tree:
    """A monitor with its whole chains up (``parents``) and down (``children``)."""

    monitor: dict[str, Any]
    parents: list[dict[str, Any]]
    children: list[dict[str, Any]]


def tree(monitor: Monitor, status_of: Callable[[int, str], str]) -> Tree:
    """The deps endpoint's answer for *monitor*; *status_of* gives the status shown.

    A monitor reached a second time (two paths to one ancestor) is listed
    again with ``repeated: true`` and its own chain left out, so the answer
    grows with the graph, not with the number of paths through it.
    """
    parents = team_parents(monitor.team_id)
    children = graph.children_of(parents)
    down = down_ids(monitor.team_id) if parents else set()
    related = {monitor.id} | graph.ancestors(parents, monitor.id)
    related |= graph.ancestors(children, monitor.id)
    rows = {
        mid: (name, status)
        for mid, name, status in Monitor.select(Monitor.id, Monitor.name, Monitor.status)
        .where(Monitor.id.in_(list(related)))
        .tuples()
    }

    def node(mid: int) -> dict[str, Any]:
        name, status = rows[mid]
        blocked = bool(graph.blocked_by(parents, mid, down))
        return {"id": mid, "name": name, "status": status_of(mid, status), "blocked": blocked}

    def grow(links: Mapping[int, set[int]], key: str) -> list[dict[str, Any]]:
        shown: set[int] = set()

        def expand(mid: int) -> list[dict[str, Any]]:
            out = []
            for next_id in sorted(links.get(mid, ())):
                if next_id not in rows:
                    continue
                entry = node(next_id)
                entry["repeated"] = next_id in shown
                shown.add(next_id)
                entry[key] = [] if entry["repeated"] else expand(next_id)
                out.append(entry)
            return out

        return expand(monitor.id)

    return Tree(node(monitor.id), grow(parents, "parents"), grow(children, "children"))


def detail(monitor_id: int, team_id: int) -> tuple[list[int], list[int]]:
    """(the ids *monitor_id* depends on, its ancestors that are down), both ascending."""
    parents = team_parents(team_id)
    ups = sorted(parents.get(monitor_id, ()))
    down = down_ids(team_id) if ups else set()
    return ups, graph.blocked_by(parents, monitor_id, down)
