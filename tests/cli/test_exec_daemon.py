"""``uptime exec`` against the real daemon: a heartbeat monitor's state follows the job.

The daemon serves on a socket bound first, so its ``UPTIME_BASE_URL`` (from
which it builds ping URLs) is where it listens.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.uptime_process import python, uptime, warnings
from tests.live_server import serving

CREATE = {"name": "nightly backup", "type": "heartbeat", "period": 3600, "grace": 600}


def create_heartbeat(alice: Any) -> dict[str, Any]:
    """The new monitor; any refusal, of the type too, fails the test."""
    response = alice.post("/api/v1/monitors", json=CREATE)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["data"]


@pytest.fixture
def settings_env(settings_env: dict[str, str], base_url: str) -> dict[str, str]:
    return {**settings_env, "UPTIME_BASE_URL": base_url}


@pytest.fixture
def daemon(app: Any, listener: socket.socket, base_url: str) -> Iterator[str]:
    with serving(app, sock=listener):
        yield base_url


@pytest.fixture
def heartbeat(alice: Any, daemon: str) -> dict[str, Any]:
    monitor = create_heartbeat(alice)
    assert monitor["ping_url"].startswith(f"{daemon}/ping/")
    return monitor


def status(alice: Any, monitor: dict[str, Any]) -> str:
    return alice.get(f"/api/v1/monitors/{monitor['id']}").get_json()["data"]["status"]


def test_exit_codes_and_output_pass_through_and_set_the_state(
    daemon: str, heartbeat: dict[str, Any], alice: Any, config_dir: Path
) -> None:
    session = {"UPTIME_SERVER": daemon, "UPTIME_SESSION": alice.token}
    job = python("print('dumped 3 tables'); raise SystemExit(3)")
    done = uptime(config_dir, "exec", str(heartbeat["id"]), "--", *job, **session)
    assert (done.returncode, done.stdout, warnings(done)) == (3, b"dumped 3 tables\n", [])
    assert status(alice, heartbeat) == "offline"
    history = alice.get(f"/api/v1/monitors/{heartbeat['id']}/history").get_json()
    assert "dumped 3 tables" in json.dumps(history)

    done = uptime(config_dir, "exec", str(heartbeat["id"]), "--", "true", **session)
    assert (done.returncode, warnings(done)) == (0, [])
    assert status(alice, heartbeat) == "online"


def test_the_ping_url_alone_needs_no_sign_in(
    daemon: str, heartbeat: dict[str, Any], alice: Any, config_dir: Path
) -> None:
    done = uptime(config_dir, "exec", "--", "true", UPTIME_PING_URL=heartbeat["ping_url"])
    assert (done.returncode, warnings(done)) == (0, [])
    assert status(alice, heartbeat) == "online"


def test_a_daemon_that_is_down_leaves_the_exit_code_alone(
    app: Any, listener: socket.socket, base_url: str, alice: Any, config_dir: Path
) -> None:
    with serving(app, sock=listener):
        ping_url = create_heartbeat(alice)["ping_url"]
    listener.close()  # the daemon has stopped: nothing listens on its port now
    job = python("print('backed up'); raise SystemExit(4)")
    done = uptime(config_dir, "exec", "--ping-retries", "1", "--", *job, UPTIME_PING_URL=ping_url)
    assert (done.returncode, done.stdout) == (4, b"backed up\n")
    assert warnings(done)[-1].endswith(
        f"the exit code 4 ping to {base_url} failed: connection refused (2 attempts)"
    )
