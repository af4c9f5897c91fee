"""'Test now' cannot take the API down: at most a few runs hold threads at once.

The server is waitress as the daemon runs it (``tests.live_server``), with
the default ``UPTIME_HTTP_THREADS`` (32), ``UPTIME_TEST_CONCURRENCY`` (4) and
``UPTIME_TEST_CONCURRENCY_PER_USER`` (2); the target is a real HTTP server on
127.0.0.1 that holds every check until the test releases it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from itertools import islice
from typing import Any

import pytest
import requests

from tests.api.hanging_target import HangingTarget
from tests.api.shapes import sqlite_only
from tests.live_server import serving
from uptime_server.errors import ApiError
from uptime_server.wsgi.check_slots import RETRY_AFTER, RunSlots


@pytest.fixture
def target() -> Iterator[HangingTarget]:
    server = HangingTarget()
    yield server
    server.stop()


def cookie(user: Any) -> dict[str, str]:
    return {"Cookie": f"session_cookie={user.token}"}


@sqlite_only  # about threads, not the database
def test_health_and_reads_answer_while_test_runs_hang(
    app: Any, settings: Any, make_user: Any, make_monitor: Any, target: HangingTarget
) -> None:
    assert (settings.http_threads, settings.test_concurrency) == (32, 4)
    users = [make_user(f"user{i}@example.com") for i in range(6)]
    runs = [
        (user, make_monitor(f"m{j}", owner=user, url=target.url, timeout=60).id)
        for user in users
        for j in range(6)
    ]  # 36 test runs: more than the 32 threads

    with serving(app) as base, ThreadPoolExecutor(len(runs)) as pool:

        def run_test(user: Any, mid: int) -> tuple[Any, requests.Response]:
            url = f"{base}/api/v1/monitors/{mid}/test"
            return user, requests.post(url, headers=cookie(user), timeout=90)

        futures = [pool.submit(run_test, user, mid) for user, mid in runs]
        assert target.wait_for(4), "four test runs should be hanging at the target"
        # The other 32 are refused at once, while the four still hang.
        refused = [f.result() for f in islice(as_completed(futures, timeout=30), 32)]
        for _user, response in refused:
            assert response.status_code == 429, response.text
            assert response.json()["error"]["code"] == "RATE_LIMIT_EXCEEDED"
            assert response.headers["Retry-After"] == str(RETRY_AFTER)

        health = requests.get(f"{base}/healthz", timeout=20)
        listed = requests.get(f"{base}/api/v1/monitors", headers=cookie(users[0]), timeout=20)
        assert (health.status_code, health.json()["database"]) == (200, "ok")
        assert (listed.status_code, listed.json()["pagination"]["total"]) == (200, 6)
        # Answered while the test runs were still hanging, not after them.
        assert target.waiting == 4
        assert sum(not f.done() for f in futures) == 4

        target.release()
        answered = [f.result(timeout=60) for f in futures]
    passed = [(user, r) for user, r in answered if r.status_code != 429]
    assert [r.json()["data"]["status"] for _, r in passed] == ["online"] * 4
    per_user = Counter(user.user.id for user, _ in passed)
    assert max(per_user.values()) <= 2
    assert target.arrived == 4


def test_slots_cap_runs_in_total_and_per_user() -> None:
    slots = RunSlots(total=3, per_user=2)
    assert slots.try_acquire("alice") is None
    assert slots.try_acquire("alice") is None
    assert slots.try_acquire("alice") == "you already have 2 test runs under way"
    assert slots.try_acquire("bob") is None
    assert slots.try_acquire("carol") == "3 test runs are already under way on this server"
    slots.release("alice")
    assert slots.try_acquire("carol") is None
    assert slots.in_use == 3


def test_a_refused_run_is_a_429_with_retry_after() -> None:
    slots = RunSlots(total=1, per_user=1)
    with slots.hold("alice"), pytest.raises(ApiError) as refused, slots.hold("bob"):
        pass
    assert (refused.value.code, refused.value.status) == ("RATE_LIMIT_EXCEEDED", 429)
    assert refused.value.headers["Retry-After"] == "5"
    assert slots.in_use == 0  # released on the way out, the refused one took nothing
    with slots.hold("bob"):
        assert slots.in_use == 1
