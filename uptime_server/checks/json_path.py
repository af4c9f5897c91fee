"""JSONPath for checks: what a monitor may ask for, and evaluating it within a budget.

Cost. jsonpath-ng materialises every match of every step. One descendant
segment (``..``) visits each node of the document once, so a path with one is
linear in the size of the body; each further ``..`` makes every node search its
whole subtree again: ``$..*..*..*`` on a 900-byte body of nested arrays is
cubic in its depth, millions of matches and seconds of CPU. So validation
(``validate_json_path``) refuses more than one ``..``, more than two wildcards
and paths over 256 characters: real checks need ``$.status``,
``$.items[*].state`` or ``$..version``, far inside those limits.

Budget. Whatever validation let through before (or a row written past it), a
check must not stall the engine. ``first_match`` walks the path lazily,
yielding matches one by one, and the check stops at the first (the only one it
compares), so a path that matches early is cheap however large its full result
would be. Every step of the walk counts against a ``Budget``: a deadline on the
monotonic clock, checked as it goes, so an evaluation over its time stops
itself; a thread cannot be killed, but this one gives up on its own. What runs
between two ticks is one jsonpath-ng step on one node (a child lookup, one
filter candidate), linear in the body (at most ``UPTIME_MAX_BODY_BYTES``).
Features whose single step is not linear are refused outright, at validation
and again at run time (``runtime_problem``): regular expressions (``=~``,
``sub()``; one backtracking match holds the GIL for as long as it runs),
arithmetic (``*`` repeats a string or list into gigabytes), sorting by a
field, and more than one ``..`` inside one filter.

Where. ``JsonPathRunner`` runs evaluations on a small dedicated thread pool,
never on the event loop and never on the loop's default executor (which
resolves DNS for every check). A thread, not a process: the budget already
bounds the work, so killing is not needed, and a thread costs no start-up,
no memory of its own and no copy of a 1 MiB body per check. The time limit
counts from when the check asks, so a queue behind slow evaluations does not
grow: a check still waiting at its deadline fails at once.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from jsonpath_ng import jsonpath as jp
from jsonpath_ng.ext import filter as jp_filter
from jsonpath_ng.ext import parse as parse_json_path
from jsonpath_ng.ext.arithmetic import Operation
from jsonpath_ng.ext.iterable import SortedThis
from jsonpath_ng.ext.string import Sub

from uptime_server.checks.rules import shorten

MAX_LENGTH = 256
MAX_DESCENDANTS = 1
MAX_WILDCARDS = 2
TIME_LIMIT = 1.0  # seconds, from the check's request to its answer
WORKERS = 2  # one slow evaluation leaves the other thread to everyone else

# Nodes the walk evaluates itself (lazily, ticking the budget); any other node
# is one jsonpath-ng step, run by its own find().
_UNION = getattr(jp, "_Union", None) or jp.Union
_WILDCARD = getattr(jp, "Wildcard", None)  # jsonpath-ng >= 1.8; older: Fields('*')
_CHECK_EVERY = 32  # steps between two looks at the clock: a look costs more than a step

Clock = Callable[[], float]


class Overtime(Exception):
    """The evaluation used up its time."""


class Budget:
    """A deadline, checked every few steps of a walk."""

    __slots__ = ("clock", "deadline", "steps")

    def __init__(self, deadline: float, clock: Clock = time.monotonic) -> None:
        self.deadline = deadline
        self.clock = clock
        self.steps = 0

    def check(self) -> None:
        if self.clock() > self.deadline:
            raise Overtime

    def tick(self) -> None:
        self.steps += 1
        if self.steps % _CHECK_EVERY == 0:
            # Hand the GIL over now and then: a thread that never blocks keeps
            # the event loop waiting up to the 5 ms switch interval at every
            # wake-up; this makes it a fraction of a millisecond.
            time.sleep(0)
            self.check()


# -- what a monitor may use ------------------------------------------------------


def validate_json_path(expr: str) -> str | None:
    """Why *expr* may not be a monitor's json_path (phrased for the field), or None."""
    if not expr or not expr.strip():
        return "must not be empty"
    if len(expr) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    try:
        compiled = compile_path(expr)
    except Exception as exc:  # jsonpath-ng and PLY raise several unrelated types
        return f"is not a valid JSONPath expression: {exc}".splitlines()[0][:200]
    nodes = list(_walk(compiled))
    if sum(isinstance(node, jp.Descendants) for node in nodes) > MAX_DESCENDANTS:
        return f"may use at most {MAX_DESCENDANTS} descendant segment (..)"
    if sum(_is_wildcard(node) for node in nodes) > MAX_WILDCARDS:
        return f"may use at most {MAX_WILDCARDS} wildcards (* or [*])"
    return runtime_problem(expr)


@functools.lru_cache(maxsize=1024)
def runtime_problem(expr: str) -> str | None:
    """A feature of *expr* whose one step the budget cannot bound, or None (cached)."""
    compiled = compile_path(expr)
    for node in _walk(compiled):
        if isinstance(node, Sub) or getattr(node, "op", None) == "=~":
            return "must not use regular expressions (=~ or sub())"
        if isinstance(node, Operation):
            return "must not use arithmetic (+ - * /)"
        if isinstance(node, SortedThis) and node.expressions:
            return "must not sort by a field"
    for part in _delegated(compiled):
        if sum(isinstance(node, jp.Descendants) for node in _walk(part)) > 1:
            return "may use at most 1 descendant segment (..) inside a filter"
    return None


@functools.lru_cache(maxsize=1024)
def compile_path(expr: str) -> jp.JSONPath:
    # Parsing goes through PLY and is slow; monitors reuse the same few paths.
    return parse_json_path(expr)


def _is_wildcard(node: jp.JSONPath) -> bool:
    if _WILDCARD is not None and isinstance(node, _WILDCARD):
        return True
    if isinstance(node, jp.Fields):
        return "*" in node.fields and bool(getattr(node, "_deprecated_wildcard_use", True))
    if isinstance(node, jp.Slice):
        return node.start is None and node.end is None and node.step is None
    return False


def _parts(node: jp.JSONPath) -> Iterator[jp.JSONPath]:
    """The sub-paths a node holds, whatever it calls them (left, expressions, ...)."""
    for value in vars(node).values():
        items = value if isinstance(value, list | tuple) else (value,)
        for item in items:
            if isinstance(item, jp.JSONPath):
                yield item
            elif isinstance(item, tuple):  # a sort key: (path, reverse)
                yield from (part for part in item if isinstance(part, jp.JSONPath))


def _walk(root: jp.JSONPath) -> Iterator[jp.JSONPath]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(_parts(node))


def _delegated(node: jp.JSONPath) -> Iterator[jp.JSONPath]:
    """The sub-paths `_matches` hands whole to jsonpath-ng (its tree, mirrored)."""
    kind = type(node)
    if kind in (jp.Child, jp.Descendants, _UNION):
        yield from _delegated(node.left)
        yield from _delegated(node.right)
    elif kind is jp_filter.Filter:
        yield from node.expressions
    elif kind is jp.Where or kind is jp.WhereNot:
        yield from _delegated(node.left)
        yield node.right
    else:
        yield node


# -- evaluating ------------------------------------------------------------------


def first_match(path: jp.JSONPath, document: Any, budget: Budget) -> jp.DatumInContext | None:
    """The first match jsonpath-ng's find() would return, found without finding the rest."""
    return next(_matches(path, document, budget), None)


def _matches(node: jp.JSONPath, datum: Any, budget: Budget) -> Iterator[jp.DatumInContext]:
    kind = type(node)
    if kind is jp.Child:
        for sub in _matches(node.left, datum, budget):
            budget.tick()
            if not isinstance(sub, jp.AutoIdForDatum):  # as Child.find: ids have no children
                yield from _matches(node.right, sub, budget)
    elif kind is jp.Descendants:
        yield from _descendants(node, datum, budget)
    elif kind is jp_filter.Filter:
        yield from _filtered(node, datum, budget)
    elif kind is _UNION:
        yield from _matches(node.left, datum, budget)
        yield from _matches(node.right, datum, budget)
    elif kind is _WILDCARD and jp.auto_id_field is None:
        # Wildcard.find's children, without a list of all of them at once.
        yield from _children(jp.DatumInContext.wrap(datum))
    elif kind is jp.Where or kind is jp.WhereNot:
        wanted = kind is jp.Where
        for sub in _matches(node.left, datum, budget):
            budget.tick()
            if bool(node.right.find(sub)) is wanted:
                yield sub
    else:
        found = node.find(datum)
        # Some ext nodes (sorted) answer a bare datum instead of a list.
        yield from found if isinstance(found, list) else [found]


def _descendants(node: jp.Descendants, datum: Any, budget: Budget) -> Iterator[jp.DatumInContext]:
    """Descendants.find's depth-first pre-order walk, one node at a time."""
    stack: list[Iterator[jp.DatumInContext]] = [_matches(node.left, datum, budget)]
    while stack:
        current = next(stack[-1], None)
        if current is None:
            stack.pop()
            continue
        budget.tick()
        yield from _matches(node.right, current, budget)
        stack.append(_children(current))


def _children(datum: jp.DatumInContext) -> Iterator[jp.DatumInContext]:
    value = datum.value
    if isinstance(value, list):
        for index, child in enumerate(value):
            yield jp.DatumInContext(child, context=datum, path=jp.Index(index))
    elif isinstance(value, dict):
        for key, child in value.items():
            yield jp.DatumInContext(
                child, context=datum, path=jp.Fields._compliant_constructor(key)
            )


def _filtered(node: Any, datum: Any, budget: Budget) -> Iterator[jp.DatumInContext]:
    """Filter.find, one candidate at a time.

    As Filter.find does, a candidate is linked to its parent (a datum with a
    path) only when an expression uses `$`, or once it has matched: building
    one for each of 100,000 array items that do not match costs more than the
    test itself.
    """
    parent = jp.DatumInContext.wrap(datum)
    value = parent.value
    if isinstance(value, list):
        items: Iterator[tuple[Any, Any]] = iter(enumerate(value))
        make_path: Callable[[Any], jp.JSONPath] = jp.Index
    elif isinstance(value, dict):
        items, make_path = iter(value.items()), jp.Fields._compliant_constructor
    else:
        return
    linked = getattr(node, "_references_root", lambda: True)()
    for key, child in items:
        budget.tick()
        subject = jp.DatumInContext(child, path=make_path(key), context=parent) if linked else child
        if all(expression.find(subject) for expression in node.expressions):
            yield (
                subject if linked else jp.DatumInContext(child, path=make_path(key), context=parent)
            )


# -- a check's JSON rule ---------------------------------------------------------


def render_json_value(value: Any) -> str:
    """A JSON string by its value; anything else by its JSON text (`true`, `42`, `null`)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def overtime_error(limit: float) -> str:
    return f"JSONPath evaluation took longer than {limit:g}s"


def check_json(
    path: str, expected: str | None, body: bytes, budget: Budget, limit: float
) -> str | None:
    """Pass rule 5 (docs/api.md#what-one-check-does) as an error; None: it holds.

    Never quotes the body.
    """
    try:
        budget.check()  # waited in the queue past the deadline: do not start
        try:
            compiled = compile_path(path)
        except Exception:  # stored before validation, or by hand
            return f"JSONPath {path}: invalid expression"
        problem = runtime_problem(path)
        if problem:
            return f"JSONPath {path}: {problem}"
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            return "response is not JSON"
        match = first_match(compiled, document, budget)
    except Overtime:
        return overtime_error(limit)
    except Exception as exc:  # a bad path or an ext node failing on this data
        # The exception's text may quote the data; its type does not.
        return f"JSONPath {path}: evaluation failed ({type(exc).__name__})"
    if match is None:
        return f"JSONPath {path}: no match"
    if expected is not None and render_json_value(match.value) != expected:
        # Not the value found: a user must not read a service's JSON through errors.
        return f'JSONPath {path}: expected "{shorten(expected)}", did not match'
    return None


class JsonPathRunner:
    """Evaluates checks' JSONPath rules off the event loop, each within the time limit."""

    def __init__(
        self, *, time_limit: float = TIME_LIMIT, workers: int = WORKERS, clock: Clock | None = None
    ) -> None:
        self.time_limit = time_limit
        self._workers = workers
        self._clock = clock or time.monotonic
        self._executor: ThreadPoolExecutor | None = None

    async def check(self, path: str, expected: str | None, body: bytes) -> str | None:
        budget = Budget(self._clock() + self.time_limit, self._clock)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="jsonpath")
        future = self._executor.submit(check_json, path, expected, body, budget, self.time_limit)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop the threads; an evaluation still running ends at its deadline."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
