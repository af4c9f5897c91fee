"""The pure graph rules of monitor dependencies (checks/dependencies.py)."""

from __future__ import annotations

from uptime_server.checks.dependencies import (
    MAX_DEPTH,
    acyclic,
    ancestors,
    blocked_by,
    children_of,
    graph_errors,
)


def chain(length: int) -> dict[int, set[int]]:
    """Monitors 0..length, each depending on the next: *length* links."""
    return {i: {i + 1} for i in range(length)}


def test_it_names_the_path_of_a_cycle_from_the_changed_node() -> None:
    parents = {1: {2}, 2: {3}, 3: {1}, 4: {1}}

    assert graph_errors(parents, [3]) == {3: "would make a cycle: 3 → 1 → 2 → 3"}
    assert graph_errors(parents, [4]) == {}  # 4 hangs below the cycle, it is not in it


def test_a_chain_of_the_maximum_depth_is_allowed_and_one_more_is_not() -> None:
    assert graph_errors(chain(MAX_DEPTH), [0]) == {}
    errors = graph_errors(chain(MAX_DEPTH + 1), [5])  # changed in the middle: both ways count
    assert errors[5].startswith(f"would make a chain of {MAX_DEPTH + 1} dependencies")
    assert errors[5].endswith(" → ".join(str(i) for i in range(MAX_DEPTH + 2)))


def test_labels_name_nodes_without_ids() -> None:
    parents = {("new", 0): {("new", 1)}, ("new", 1): {("new", 0)}}

    errors = graph_errors(parents, [("new", 0)], label=lambda n: f"entry {n[1]}")

    assert errors == {("new", 0): "would make a cycle: entry 0 → entry 1 → entry 0"}


def test_acyclic_sees_a_loop_anywhere() -> None:
    assert acyclic({1: {2, 3}, 2: {3}, 3: set()})
    assert not acyclic({1: {2}, 2: {3}, 3: {2}})
    assert not acyclic({1: {1}})


def test_blocked_by_is_every_ancestor_that_is_down() -> None:
    parents = {1: {2}, 2: {3}, 4: {3}, 5: set()}

    assert ancestors(parents, 1) == {2, 3}
    assert blocked_by(parents, 1, {3}) == [3]
    assert blocked_by(parents, 1, {5}) == []
    assert blocked_by(parents, 3, {3}) == []  # down itself, blocked by nothing
    assert children_of(parents) == {2: {1}, 3: {2, 4}}
