"""Monitors as code on the server: plan and apply a team's whole desired set at once.

``plan`` validates every entry (the monitor as a create would, its alert
settings as a PUT over the defaults would) and answers one VALIDATION_ERROR
naming every bad field as ``monitors[i].field`` before anything is looked
up. It then matches entries to the team's monitors (docs/monitors-as-code.md,
"Matching") and compares each whole configuration, normalised by the same
models that store it, so a second apply of the same file finds nothing to do.

``apply`` writes a plan in one transaction: deletes first (they free keys and
quota), then updates, then creates, then the dependency lists (an entry may
depend on another that is created by the same apply). A failure anywhere
rolls all of it back.

``depends_on`` in an entry names monitors by id (an int), or by a string: the
key of an entry or of one of the team's monitors, else the name of one
(docs/monitors-as-code.md#dependencies). The lists are checked over the
team's graph as the whole apply would leave it, so a file may turn a
dependency round in one go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from uptime_server.auth.teams import Acting
from uptime_server.checks.dependencies import MAX_PARENTS
from uptime_server.config import Settings
from uptime_server.db import write_tx
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import AlertSettings, Monitor
from uptime_server.models.tags import tags_by_monitor
from uptime_server.schemas.monitor_apply import ApplyRequest, alert_defaults, entry_of
from uptime_server.schemas.monitor_config import (
    AlertSettingsIn,
    MonitorConfig,
    parse_alert_settings,
    parse_monitor,
    quorum_errors,
)
from uptime_server.services import audit, render_purges
from uptime_server.services import dependencies as dependency_service
from uptime_server.services import monitors as monitor_service

ALERT_FIELDS = tuple(AlertSettingsIn.model_fields)
# The counts of an apply's audit line, by the plan's action they count.
APPLY_COUNTS = {
    "created": "create",
    "updated": "update",
    "deleted": "delete",
    "unchanged": "unchanged",
}


@dataclass
class Desired:
    """One valid entry: where it stood, the monitor and the alert settings it states."""

    index: int
    config: MonitorConfig
    alerts: AlertSettingsIn
    # depends_on as the entry states it (ids, keys, names), then as planned:
    # each parent as a monitor id, or the index of an entry to be created.
    refs: list[int | str] = field(default_factory=list)
    parents: list[Node] = field(default_factory=list)

    @property
    def identity(self) -> tuple[str, str]:
        return ("key", self.config.key) if self.config.key else ("name", self.config.name)


# A monitor in the graph of a plan: its id, or ("new", entry index) until created.
Node = int | tuple[str, int]


@dataclass
class Step:
    action: str
    monitor: Monitor | None
    desired: Desired | None
    changes: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        source = self.desired.config if self.desired else self.monitor
        return {
            "action": self.action,
            "id": self.monitor.id if self.monitor else None,
            "key": source.key,
            "name": source.name,
            "entry": self.desired.index if self.desired else None,
            "changes": self.changes,
        }


def validate(request: ApplyRequest, settings: Settings) -> list[Desired]:
    """Every entry parsed, or one VALIDATION_ERROR naming each bad field of each entry."""
    details: dict[str, list[str]] = {}
    desired: list[Desired] = []
    for index, raw in enumerate(request.monitors):
        where = f"monitors[{index}]"
        body = dict(raw)
        alerts_raw = body.pop("alerts", None)
        refs = body.pop("depends_on", [])
        if problem := _refs_problem(refs):
            details[f"{where}.depends_on"] = [problem]
            refs = None
        try:
            config = parse_monitor(body, settings)
        except ApiError as exc:
            details.update({f"{where}.{k}": v for k, v in exc.details.items()})
            config = None
        try:
            alerts = parse_alert_settings(alert_defaults(), alerts_raw or {})
        except ApiError as exc:
            details.update({f"{where}.alerts.{k}": v for k, v in exc.details.items()})
            alerts = None
        if config is not None and alerts is not None and refs is not None:
            quorum = quorum_errors(alerts, config.locations or [])
            details.update({f"{where}.alerts.{k}": v for k, v in quorum.items()})
            desired.append(Desired(index, config, alerts, list(dict.fromkeys(refs))))
    seen: dict[tuple[str, str], int] = {}
    for item in desired:
        first = seen.setdefault(item.identity, item.index)
        if first != item.index:
            kind, value = item.identity
            details[f"monitors[{item.index}].{kind}"] = [
                f"{kind} {value!r} is also that of entry {first}"
            ]
    if details:
        raise validation_error(details, "Invalid monitors: nothing was applied")
    return desired


def plan(acting: Acting, desired: list[Desired], *, prune: bool, settings: Settings) -> list[Step]:
    """What applying *desired* would do to the team's monitors, in entry order, then the rest."""
    monitors = list(Monitor.select().where(Monitor.team == acting.team_id).order_by(Monitor.id))
    matched = _match(desired, monitors)
    claimed = {m.id for m in matched.values()}
    gone = {m.id for m in monitors if m.id not in claimed} if prune else set()
    _plan_dependencies(acting.team_id, desired, matched, monitors, gone)
    graph = dependency_service.team_parents(acting.team_id)
    tags = tags_by_monitor(m.id for m in matched.values())
    stored_alerts = {
        row.monitor_id: row
        for row in AlertSettings.select().where(
            AlertSettings.monitor.in_([m.id for m in matched.values()])
        )
    }
    steps: list[Step] = []
    for item in desired:
        monitor = matched.get(item.index)
        depends_on = _shown_parents(item.parents, desired)
        if monitor is None:
            config = {**item.config.model_dump(), "depends_on": depends_on}
            created = entry_of(config, item.alerts.model_dump(), settings)
            steps.append(Step("create", None, item, _as_changes(created, {})))
            continue
        stored = graph.get(monitor.id, set())
        old = {
            **monitor_service.config_of(monitor, tags[monitor.id], sorted(stored)),
            "alerts": _alerts_of(stored_alerts.get(monitor.id)),
        }
        new = {
            **item.config.model_dump(),
            "depends_on": depends_on,
            "alerts": item.alerts.model_dump(),
        }
        changes = _as_changes(new, old)
        steps.append(Step("update" if changes else "unchanged", monitor, item, changes))
    for monitor in monitors:
        if monitor.id not in claimed:
            steps.append(Step("delete" if prune else "extra", monitor, None))
    return steps


def apply(acting: Acting, steps: list[Step], *, now: datetime, settings: Settings) -> bool:
    """Write *steps* in one transaction; whether anything changed.

    The run leaves one audit line, ``monitors.apply`` with the counts of what
    it created, updated, deleted and left unchanged (a run with nothing to do
    too: it says the set was checked); the monitors it touches get no line
    of their own.
    """
    order = ("delete", "update", "create")
    todo = sorted((s for s in steps if s.action in order), key=lambda s: order.index(s.action))
    created: dict[int, int] = {}  # entry index → the new monitor's id
    with write_tx():
        for step in todo:
            if step.action == "delete":
                monitor_service.delete_monitor(acting, step.monitor, now=now, audited=False)
                continue
            desired = step.desired
            if step.action == "update":
                # The lists are written once every monitor exists (below).
                stored = dependency_service.parents_of(step.monitor.id)
                config = desired.config.model_copy(update={"depends_on": stored})
                monitor = monitor_service.update_monitor(
                    acting, step.monitor, config, now=now, settings=settings, audited=False
                )
            else:
                monitor = monitor_service.create_monitor(
                    acting, desired.config, now=now, settings=settings, audited=False
                )
                created[desired.index] = monitor.id
            monitor_service.store_alert_settings(monitor, desired.alerts)
        wanted = {
            (step.monitor.id if step.monitor else created[step.desired.index]): [
                created[p[1]] if isinstance(p, tuple) else p for p in step.desired.parents
            ]
            for step in todo
            if step.desired is not None
        }
        if wanted:
            dependency_service.store(acting.team_id, wanted)
        counts = {
            name: sum(1 for s in steps if s.action == action)
            for name, action in APPLY_COUNTS.items()
        }
        audit.record(acting, "monitors.apply", "team", acting.team_id, counts, at=now)
    if not todo:
        return False
    # Again once committed: the services' own purges ran inside this
    # transaction, and a render between them and the commit read the old rows.
    render_purges.forget_badges(s.monitor.badge_token for s in todo if s.monitor is not None)
    render_purges.forget_pages_of([acting.team_id])
    return True


def export(acting: Acting, tags: list[str], settings: Settings) -> list[dict[str, Any]]:
    """The user's monitors (carrying all of *tags*) as entries, in id order."""
    query = Monitor.select().where(Monitor.team == acting.team_id)
    if tags:
        query = query.where(Monitor.id.in_(monitor_service.ids_tagged(acting, tags)))
    monitors = list(query.order_by(Monitor.id))
    tag_map = tags_by_monitor(m.id for m in monitors)
    graph = dependency_service.team_parents(acting.team_id)
    named = _names_of(acting.team_id) if graph else {}
    alerts = {
        row.monitor_id: row
        for row in AlertSettings.select().where(AlertSettings.monitor.in_([m.id for m in monitors]))
    }
    return [
        entry_of(
            {
                **monitor_service.config_of(m, tag_map[m.id], []),
                "depends_on": [named[p] for p in sorted(graph.get(m.id, ()))],
            },
            _alerts_of(alerts.get(m.id)),
            settings,
        )
        for m in monitors
    ]


def _names_of(team_id: int) -> dict[int, int | str]:
    """How an export names each of the team's monitors in ``depends_on``.

    Its key; else its name, when no other monitor of the team has it; else its id.
    """
    rows = list(
        Monitor.select(Monitor.id, Monitor.key, Monitor.name)
        .where(Monitor.team == team_id)
        .tuples()
    )
    counts: dict[str, int] = {}
    for _id, _key, name in rows:
        counts[name] = counts.get(name, 0) + 1
    return {mid: key if key else (name if counts[name] == 1 else mid) for mid, key, name in rows}


def _refs_problem(refs: Any) -> str | None:
    """What is wrong with the shape of an entry's ``depends_on``, if anything."""
    rule = f"must be a list of at most {MAX_PARENTS} monitor ids, keys or names"
    if not isinstance(refs, list) or len(set(map(repr, refs))) > MAX_PARENTS:
        return rule
    for ref in refs:
        if isinstance(ref, bool) or not isinstance(ref, int | str):
            return rule
        if isinstance(ref, int) and not 0 < ref <= monitor_service.MAX_ID:
            return dependency_service.unknown_message(ref)
        if isinstance(ref, str) and not ref.strip():
            return rule
    return None


def _plan_dependencies(
    team_id: int,
    desired: list[Desired],
    matched: dict[int, Monitor],
    monitors: list[Monitor],
    gone: set[int],
) -> None:
    """Resolve each entry's ``depends_on`` into ``parents`` and check the graph it makes.

    One VALIDATION_ERROR names every entry whose list is refused, as
    ``monitors[i].depends_on``.
    """

    def node_of(item: Desired) -> Node:
        monitor = matched.get(item.index)
        return monitor.id if monitor is not None else ("new", item.index)

    entries_by: dict[str, dict[str, list[Desired]]] = {"key": {}, "name": {}}
    monitors_by: dict[str, dict[str, list[Monitor]]] = {"key": {}, "name": {}}
    for item in desired:
        if item.config.key:
            entries_by["key"].setdefault(item.config.key, []).append(item)
        entries_by["name"].setdefault(item.config.name, []).append(item)
    for m in monitors:
        if m.key:
            monitors_by["key"].setdefault(m.key, []).append(m)
        monitors_by["name"].setdefault(m.name, []).append(m)

    def resolve(ref: int | str) -> Node | str:
        """The node *ref* names, or why it names none."""
        if isinstance(ref, int):
            return ref
        for kind in ("key", "name"):
            found = {node_of(d) for d in entries_by[kind].get(ref, [])}
            found |= {m.id for m in monitors_by[kind].get(ref, [])}
            if len(found) == 1:
                return found.pop()
            if len(found) > 1:
                return f"{ref!r} names several monitors; name it by key or id"
        return f"no monitor of yours, nor any entry, has the key or name {ref!r}"

    details: dict[str, list[str]] = {}
    wanted: dict[Node, list[Node]] = {}
    where: dict[Node, Desired] = {}
    for item in desired:
        parents: list[Node] = []
        for ref in item.refs:
            node = resolve(ref)
            if isinstance(node, str):
                details[f"monitors[{item.index}].depends_on"] = [node]
                break
            if node in gone:
                details[f"monitors[{item.index}].depends_on"] = [
                    f"names monitor {node}, which this apply deletes (prune)"
                ]
                break
            parents.append(node)
        item.parents = list(dict.fromkeys(parents))
        wanted[node_of(item)] = item.parents
        where[node_of(item)] = item
    if not details:

        def label(node: Node) -> object:
            if isinstance(node, tuple):
                config = where[node].config
                return repr(config.key or config.name)
            return node

        errors = dependency_service.problems(team_id, wanted, label=label, gone=gone)
        for node, message in errors.items():
            details[f"monitors[{where[node].index}].depends_on"] = [message]
    if details:
        raise validation_error(details, "Invalid monitors: nothing was applied")


def _shown_parents(parents: list[Node], desired: list[Desired]) -> list[int | str]:
    """An entry's planned parents as a plan shows them: ids ascending, then new entries."""
    by_index = {item.index: item for item in desired}
    ids = sorted(p for p in parents if isinstance(p, int))
    new = [
        by_index[p[1]].config.key or by_index[p[1]].config.name
        for p in parents
        if isinstance(p, tuple)
    ]
    return [*ids, *new]


def _match(desired: list[Desired], monitors: list[Monitor]) -> dict[int, Monitor]:
    """Entry index → the monitor it describes (docs/monitors-as-code.md#matching).

    Keyed entries first: the monitor with that key, else one without a key
    and of that name (so a key can be added to an existing monitor). Then the
    others, by name. A name that fits several monitors is ambiguous: the
    entry needs a key.
    """
    by_key = {m.key: m for m in monitors if m.key}
    taken: set[int] = set()
    matched: dict[int, Monitor] = {}
    details: dict[str, list[str]] = {}

    def claim(item: Desired, candidates: list[Monitor]) -> None:
        free = [m for m in candidates if m.id not in taken]
        if len(free) > 1:
            ids = ", ".join(str(m.id) for m in free)
            details[f"monitors[{item.index}].name"] = [
                f"matches several monitors named {item.config.name!r} (ids {ids}); "
                "give the entry a key, or rename them"
            ]
        elif free:
            matched[item.index] = free[0]
            taken.add(free[0].id)

    keyed = [d for d in desired if d.config.key]
    for item in keyed:
        if item.config.key in by_key:
            matched[item.index] = by_key[item.config.key]
            taken.add(by_key[item.config.key].id)
    for item in keyed:
        if item.index not in matched:
            claim(item, [m for m in monitors if not m.key and m.name == item.config.name])
    for item in desired:
        if not item.config.key:
            claim(item, [m for m in monitors if m.name == item.config.name])
    if details:
        raise validation_error(details, "Ambiguous monitors: nothing was applied")
    return matched


def _alerts_of(row: AlertSettings | None) -> dict[str, Any]:
    if row is None:
        return alert_defaults()
    return {name: getattr(row, name) for name in ALERT_FIELDS}


def _as_changes(new: dict[str, Any], old: dict[str, Any]) -> list[dict[str, Any]]:
    """Field by field, what differs (``alerts`` by setting, as ``alerts.<name>``)."""
    changes: list[dict[str, Any]] = []
    for name, value in new.items():
        if name == "alerts" and isinstance(value, dict):
            before = old.get("alerts") or {}
            changes.extend(
                {"field": f"alerts.{k}", "old": before.get(k), "new": v}
                for k, v in value.items()
                if before.get(k) != v
            )
        elif old.get(name) != value:
            changes.append({"field": name, "old": old.get(name), "new": value})
    return changes
