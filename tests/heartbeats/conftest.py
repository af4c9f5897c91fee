"""Heartbeat fixtures: a monitor made through the API, its ping path, the scheduler."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from uptime_server.engine.scheduler import CheckScheduler
from uptime_server.engine.worker import InProcess

URL = "/api/v1/monitors"


async def _no_sleep(seconds: float) -> None:
    pass


@pytest.fixture
def scheduler(db: Any, settings: Any, clock: Any) -> Iterator[CheckScheduler]:
    here = InProcess(settings)
    made = CheckScheduler(settings, claims=here, records=here, clock=clock, sleep=_no_sleep)
    yield made
    made.close()


def sweep(scheduler: CheckScheduler, clock: Any) -> None:
    """One scheduler turn at the clock's time, its verdicts written."""
    scheduler.loop(clock.now())
    assert scheduler.settle(30)


def make_heartbeat(user: Any, **fields: Any) -> dict[str, Any]:
    """Create a heartbeat monitor through the API; its create response's data."""
    body = {"name": "backup", "type": "heartbeat", "period": 3600, "grace": 600, **fields}
    response = user.post(URL, json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def ping_path(monitor: dict[str, Any], suffix: str = "") -> str:
    path = urlsplit(monitor["ping_url"]).path
    return f"{path}/{suffix}" if suffix else path


def shown(user: Any, monitor_id: int) -> dict[str, Any]:
    response = user.get(f"{URL}/{monitor_id}")
    assert response.status_code == 200
    return response.get_json()["data"]


def history(user: Any, monitor_id: int) -> list[dict[str, Any]]:
    response = user.get(
        f"{URL}/{monitor_id}/history", query_string={"from": "2000-01-01T00:00:00Z"}
    )
    assert response.status_code == 200
    return response.get_json()["data"]
