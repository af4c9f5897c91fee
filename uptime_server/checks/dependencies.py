"""Monitor dependencies as a graph: what may be stored, and who is blocked.

A team's graph is a mapping *parents*: monitor → the monitors it depends on
(read with one query, services/dependencies.py). Everything here is pure over
that mapping, so the API's checks, the list's ``blocked`` flag and the deps
tree agree on one reading of the graph.

A *chain* is a path of dependency links; its depth counts the links, so a
monitor with a parent and a grandparent sits at the bottom of a chain of 2.
The graph must stay acyclic and no chain may be deeper than ``MAX_DEPTH``:
both are checked over the graph as it would be after a change, at the nodes
the change touches (a stored graph was checked when it was stored, so any new
cycle or over-deep chain runs through a changed node).

*Blocked*: a monitor is blocked while any of its ancestors, however far up,
is *down* (has an open downtime notification: warning does not count).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from typing import TypeVar

MAX_PARENTS = 20  # ids in one monitor's depends_on
MAX_DEPTH = 10  # links in the deepest chain

Node = TypeVar("Node", bound=Hashable)
Graph = Mapping[Node, Collection[Node]]


def arrow_path(path: Iterable[object]) -> str:
    return " → ".join(str(node) for node in path)


def cycle_through(parents: Graph[Node], start: Node) -> list[Node] | None:
    """A path start → … → start along dependency links, or None when there is none."""
    # Iterative depth-first search: the path on the stack is the answer.
    seen: set[Node] = set()
    stack: list[tuple[Node, list[Node]]] = [(start, [start])]
    while stack:
        node, path = stack.pop()
        for parent in sorted(parents.get(node, ()), key=repr, reverse=True):
            if parent == start:
                return [*path, start]
            if parent not in seen:
                seen.add(parent)
                stack.append((parent, [*path, parent]))
    return None


def acyclic(parents: Graph[Node]) -> bool:
    """Whether *parents* has no cycle: one colouring walk over the whole graph."""
    done: set[Node] = set()
    for root in parents:
        if root in done:
            continue
        on_path: set[Node] = {root}
        stack = [(root, iter(parents.get(root, ())))]
        while stack:
            node, ups = stack[-1]
            parent = next(ups, None)
            if parent is None:
                stack.pop()
                on_path.discard(node)
                done.add(node)
            elif parent in on_path:
                return False
            elif parent not in done:
                on_path.add(parent)
                stack.append((parent, iter(parents.get(parent, ()))))
    return True


def _longest(links: Graph[Node], start: Node, memo: dict[Node, list[Node]]) -> list[Node]:
    """The longest path from *start* along *links* (acyclic there), *start* first."""
    # Post-order without recursion: a chain may be long in a graph not yet checked.
    stack: list[tuple[Node, bool]] = [(start, False)]
    while stack:
        node, expanded = stack.pop()
        if node in memo:
            continue
        nexts = sorted(links.get(node, ()), key=repr)
        if not expanded:
            stack.append((node, True))
            stack.extend((n, False) for n in nexts if n not in memo)
            continue
        best: list[Node] = []
        for n in nexts:
            if len(memo[n]) > len(best):
                best = memo[n]
        memo[node] = [node, *best]
    return memo[start]


def children_of(parents: Graph[Node]) -> dict[Node, set[Node]]:
    """The graph turned round: monitor → the monitors that depend on it."""
    children: dict[Node, set[Node]] = {}
    for child, ups in parents.items():
        for parent in ups:
            children.setdefault(parent, set()).add(child)
    return children


def graph_errors(
    parents: Graph[Node],
    changed: Iterable[Node],
    label: Callable[[Node], object] = lambda node: node,
) -> dict[Node, str]:
    """The problem each changed node makes in *parents* (the graph after the change).

    A cycle through it, named as its path; else a chain through it deeper
    than ``MAX_DEPTH``. *label* names a node in the message (an id, or an
    entry of a file whose monitor has no id yet).
    """
    errors: dict[Node, str] = {}
    changed = list(changed)
    if not acyclic(parents):
        # Rare and refused: only then is each changed node searched for its cycle.
        for node in changed:
            cycle = cycle_through(parents, node)
            if cycle is not None:
                errors[node] = f"would make a cycle: {arrow_path(map(label, cycle))}"
        return errors  # depths mean nothing in a graph with a cycle
    children = children_of(parents)
    up: dict[Node, list[Node]] = {}
    down: dict[Node, list[Node]] = {}
    for node in changed:
        above = _longest(parents, node, up)
        below = _longest(children, node, down)
        chain = [*reversed(below), *above[1:]]
        if len(chain) - 1 > MAX_DEPTH:
            errors[node] = (
                f"would make a chain of {len(chain) - 1} dependencies, deeper than "
                f"{MAX_DEPTH}: {arrow_path(map(label, chain))}"
            )
    return errors


def ancestors(parents: Graph[Node], start: Node) -> set[Node]:
    """Every monitor *start* depends on, directly or through a chain."""
    found: set[Node] = set()
    todo = list(parents.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in found:
            found.add(node)
            todo.extend(parents.get(node, ()))
    found.discard(start)
    return found


def blocked_by(parents: Graph[Node], start: Node, down: Collection[Node]) -> list[Node]:
    """The ancestors of *start* that are down, sorted: it is blocked while there is one."""
    if not down:
        return []
    return sorted(ancestors(parents, start) & set(down))  # type: ignore[type-var]
