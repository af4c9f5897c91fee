"""JSONPath rules of a check (engine/json_path): limits, first-match walk, the time budget."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from uptime_server.checks.json_path import (
    Budget,
    JsonPathRunner,
    check_json,
    compile_path,
    first_match,
    validate_json_path,
)
from uptime_server.checks.types import CheckSpec, RunResult
from uptime_server.engine.probe import Prober

# A 900-byte body on which jsonpath-ng's own find() of `$..*..*..*` takes seconds.
NESTED = ("[" * 450 + "]" * 450).encode()
# Never matches on arrays, so a walk of it visits every (node, node, node) triple.
SLOW_PATH = "$..*..*..*.nope"


class StoppedClock:
    """Monotonic time for budgets that moves only when the test moves it.

    ``read_by_worker`` is set once an evaluation thread looks at it: from then
    on, that evaluation has started.
    """

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.reads = 0
        self.read_by_worker = threading.Event()

    def __call__(self) -> float:
        self.reads += 1
        if threading.current_thread().name.startswith("jsonpath"):
            self.read_by_worker.set()
        return self.now


# -- validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "$.status",
        "$.items[*].state",
        "$..version",
        "$.a[*].b[*]",
        "$..[?(@.name == 'db')].status",
        "$.nested.items[?name = 'a'].name",
        "$.items.`len`",
        "$." + "a" * 254,  # 256 characters
    ],
)
def test_paths_a_check_needs_are_accepted(path: str) -> None:
    assert validate_json_path(path) is None


@pytest.mark.parametrize(
    "path, problem",
    [
        ("$..*..*..*", "may use at most 1 descendant segment (..)"),
        ("$..a..b", "may use at most 1 descendant segment (..)"),
        ("$[?(@..a)]..b", "may use at most 1 descendant segment (..)"),  # filters count too
        ("$.*.*.*", "may use at most 2 wildcards (* or [*])"),
        ("$[*][*][:]", "may use at most 2 wildcards (* or [*])"),
        ("$." + "a" * 255, "must be at most 256 characters"),
        ("$.a[?(@.n =~ '(a+)+$')]", "must not use regular expressions (=~ or sub())"),
        ("$.a.`sub(/(a+)+$/, b)`", "must not use regular expressions (=~ or sub())"),
        ("$.a * 99999999", "must not use arithmetic (+ - * /)"),
        ("$.items[/name]", "must not sort by a field"),
        ("$[", "is not a valid JSONPath expression"),
        ("", "must not be empty"),
    ],
)
def test_pathological_paths_are_refused(path: str, problem: str) -> None:
    error = validate_json_path(path)
    assert error is not None and error.startswith(problem), error


# -- first match -----------------------------------------------------------------

DOCUMENT: dict[str, Any] = {
    "want": 2,
    "a": {"b": {"name": "deep"}},
    "items": [
        {"n": 1, "name": "one", "tags": ["x", "y"]},
        {"n": 2, "name": "two", "tags": []},
        {"n": 3, "name": "three"},
    ],
    "name": "top",
}


@pytest.mark.parametrize(
    "path",
    [
        "$.name",
        "$..name",
        "$..*",
        "$..tags[*]",
        "$.items[*].name",
        "$.items[1:].name",
        "$.items[-1].name",
        "$.items[?(@.n > 1)].name",
        "$.items[?(@.n == $.want)].name",  # `$` inside a filter is the document root
        "$..[?(@.n)].name",
        "$.items[?name = 'three'].n",
        "$['name','want']",
        "$.items[*].tags.`len`",
        "$.missing",
        "$.items[?(@.n > 9)]",
    ],
)
def test_first_match_is_the_first_of_jsonpath_ngs_matches(path: str) -> None:
    compiled = compile_path(path)
    expected = compiled.find(DOCUMENT)
    found = first_match(compiled, DOCUMENT, Budget(float("inf")))
    if not expected:
        assert found is None
    else:
        assert found is not None
        assert (found.value, str(found.full_path)) == (
            expected[0].value,
            str(expected[0].full_path),
        )


def test_the_walk_stops_at_the_first_match() -> None:
    # find() would build millions of matches here; the check needs one.
    budget = Budget(float("inf"))
    found = first_match(compile_path("$..*..*..*"), json.loads(NESTED), budget)
    assert found is not None
    assert budget.steps < 10


# -- the budget ------------------------------------------------------------------


def test_an_evaluation_over_its_time_stops_with_a_clear_error() -> None:
    clock = StoppedClock()
    budget = Budget(deadline=1.0, clock=clock)
    clock_reads_before_deadline = 3  # the start, then two looks during the walk

    def moving_clock() -> float:
        if clock.reads >= clock_reads_before_deadline:
            clock.now = 1.5
        return clock()

    budget.clock = moving_clock
    error = check_json(SLOW_PATH, None, NESTED, budget, limit=1.0)
    assert error == "JSONPath evaluation took longer than 1s"
    # It gave up at its first look at the clock past the deadline, not at the end.
    assert clock.reads == clock_reads_before_deadline + 1


def test_a_check_still_queued_at_its_deadline_does_not_start() -> None:
    budget = Budget(deadline=1.0, clock=lambda: 2.0)
    error = check_json("$.status", None, b'{"status": "up"}', budget, limit=1.0)
    assert error == "JSONPath evaluation took longer than 1s"
    assert budget.steps == 0


@pytest.mark.parametrize(
    "path, problem",
    [
        ("$.a[?(@.n =~ '(a+)+$')]", "must not use regular expressions (=~ or sub())"),
        ("$.a * 99999999", "must not use arithmetic (+ - * /)"),
        ("$[?(@..a..b)]", "may use at most 1 descendant segment (..) inside a filter"),
    ],
)
def test_a_stored_path_whose_one_step_is_unbounded_is_not_run(path: str, problem: str) -> None:
    # Stored before validation knew better: the engine refuses to run it.
    body = json.dumps({"a": ["a" * 5000 + "!"]}).encode()
    assert check_json(path, None, body, Budget(float("inf")), 1.0) == f"JSONPath {path}: {problem}"


def test_a_path_of_many_descendants_still_runs_within_the_budget() -> None:
    # Only validation refuses `$..*..*..*`; the engine runs it, budgeted.
    assert check_json("$..*..*..*", None, NESTED, Budget(float("inf")), 1.0) is None


def test_errors_never_quote_the_body() -> None:
    body = b'{"status": "SECRET-down", "mixed": [1, "SECRET"]}'
    budget = Budget(float("inf"))
    mismatch = check_json("$.status", "up", body, budget, 1.0)
    assert mismatch == 'JSONPath $.status: expected "up", did not match'
    failed = check_json("$.mixed.`sorted`", None, body, budget, 1.0)
    assert failed == "JSONPath $.mixed.`sorted`: evaluation failed (TypeError)"
    assert check_json("$.status", None, b"SECRET, not JSON", budget, 1.0) == (
        "response is not JSON"
    )


# -- off the event loop ----------------------------------------------------------


def test_a_slow_evaluation_fails_its_check_while_other_checks_go_on(http_url: str) -> None:
    clock = StoppedClock()
    runner = JsonPathRunner(time_limit=1.0, clock=clock)

    async def scenario() -> tuple[RunResult, RunResult, bool, RunResult]:
        async with Prober(json_paths=runner) as prober:
            slow = asyncio.create_task(
                prober.run(CheckSpec(f"{http_url}/nested/450", json_path=SLOW_PATH))
            )
            assert await asyncio.to_thread(clock.read_by_worker.wait, 30)
            # The slow evaluation is under way; the loop still runs checks,
            # and a second JSONPath check gets the other thread.
            plain = await prober.run(CheckSpec(f"{http_url}/ok"))
            other = await prober.run(
                CheckSpec(f"{http_url}/json", json_path="$.status", expected_json_value="up")
            )
            slow_still_running = not slow.done()
            clock.now = 1.5  # its second is up
            return plain, other, slow_still_running, await slow

    try:
        plain, other, slow_still_running, slow = asyncio.run(scenario())
    finally:
        runner.close()
    assert plain.passed and other.passed, (plain.error, other.error)
    assert slow_still_running
    assert not slow.passed
    assert slow.error == "JSONPath evaluation took longer than 1s"
    assert slow.status_code == 200
