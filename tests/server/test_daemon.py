"""``uptime server run`` as a real process: waitress on loopback, sessions, SIGTERM.

Each test starts the daemon on port 0 (it logs the port it got), signs in
with ``uptime server session`` and talks to it over HTTP with ``requests``.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow
LISTENING = re.compile(r"API listening on http://127\.0\.0\.1:(\d+)")


def uptime_command() -> list[str]:
    script = Path(sys.executable).with_name("uptime")
    return [str(script)] if script.exists() else [sys.executable, "-m", "uptime_cli.main"]


class Daemon:
    """A running ``uptime server run`` and the lines it wrote to stderr."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.env = env
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        self.proc = subprocess.Popen(
            [*uptime_command(), "server", "run", "--host", "127.0.0.1", "--port", "0", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.port = self._wait_for(LISTENING, timeout=60.0)
        self.base = f"http://127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def _wait_for(self, pattern: re.Pattern[str], timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            self.log.append(line)
            if match := pattern.search(line):
                return int(match.group(1))
        raise AssertionError("daemon did not start:\n" + "".join(self.log))

    def session(self, email: str) -> str:
        result = subprocess.run(
            [*uptime_command(), "server", "session", "--email", email],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return result.stdout.strip()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)  # a loaded machine
        time.sleep(0.05)  # let the reader thread drain the pipe
        while not self.lines.empty():
            self.log.append(self.lines.get())
        return code


def start_daemon(tmp_path: Path, database_url: str) -> Iterator[Daemon]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "UPTIME_BASE_URL"},
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_DATABASE_URL": database_url,
        "UPTIME_LOG_LEVEL": "INFO",
        "UPTIME_SHUTDOWN_GRACE": "2",
    }
    daemon = Daemon(env)
    try:
        yield daemon
    finally:
        if daemon.proc.poll() is None:
            daemon.proc.kill()
            daemon.proc.wait(timeout=5)


@pytest.fixture
def sqlite_daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from start_daemon(tmp_path, f"sqlite:///{tmp_path / 'uptime.db'}")


@pytest.fixture
def pg_daemon(tmp_path: Path, fresh_pg_url: str) -> Iterator[Daemon]:
    # A database of its own: its scheduler would check other tests' monitors
    # (and log their failures, which a clean exit must not show).
    yield from start_daemon(tmp_path, fresh_pg_url)


def exercise(daemon: Daemon) -> None:
    token = daemon.session("daemon@example.com")
    cookie = {"Cookie": f"session_cookie={token}"}
    listed = requests.get(f"{daemon.base}/api/v1/monitors", headers=cookie, timeout=5)
    assert listed.status_code == 200
    assert listed.json()["pagination"]["total"] == 0
    body = {"name": "self", "url": f"{daemon.base}/healthz", "type": "http"}
    created = requests.post(f"{daemon.base}/api/v1/monitors", json=body, headers=cookie, timeout=5)
    assert created.status_code == 201, created.text
    mid = created.json()["data"]["id"]
    shown = requests.get(f"{daemon.base}/api/v1/monitors/{mid}", headers=cookie, timeout=5)
    assert shown.json()["data"]["name"] == "self"
    anonymous = requests.get(f"{daemon.base}/api/v1/monitors", timeout=5)
    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "UNAUTHORIZED")
    health = requests.get(f"{daemon.base}/healthz", timeout=5)
    assert (health.status_code, health.json()["database"]) == (200, "ok")


def assert_clean_exit(daemon: Daemon) -> None:
    assert daemon.stop() == 0
    log = "".join(daemon.log)
    assert "shutting down" in log
    assert "Traceback" not in log


def test_it_serves_the_api_on_sqlite_and_exits_cleanly(sqlite_daemon: Daemon) -> None:
    exercise(sqlite_daemon)
    assert_clean_exit(sqlite_daemon)


@pytest.mark.postgres
def test_it_serves_the_api_on_postgresql_and_exits_cleanly(pg_daemon: Daemon) -> None:
    exercise(pg_daemon)
    assert_clean_exit(pg_daemon)


def test_without_a_base_url_links_name_the_port_it_listens_on(sqlite_daemon: Daemon) -> None:
    # Started with --port 0 and no UPTIME_BASE_URL: the port the OS gave is in the links.
    assert "UPTIME_BASE_URL" not in sqlite_daemon.env
    cookie = {"Cookie": f"session_cookie={sqlite_daemon.session('daemon@example.com')}"}
    body = {"name": "backup", "type": "heartbeat", "period": 3600}
    api = f"{sqlite_daemon.base}/api/v1"
    created = requests.post(f"{api}/monitors", json=body, headers=cookie, timeout=5).json()
    ping_url = created["data"]["ping_url"]
    assert ping_url.startswith(f"{sqlite_daemon.base}/ping/")
    assert requests.get(ping_url, timeout=5).status_code == 200  # and it answers there
    page = {"slug": "acme", "title": "Acme"}
    made = requests.post(f"{api}/status-pages", json=page, headers=cookie, timeout=5).json()
    assert made["data"]["url"] == f"{sqlite_daemon.base}/status/acme"
    assert_clean_exit(sqlite_daemon)


def test_it_logs_its_settings_with_the_secrets_hidden(tmp_path: Path) -> None:
    secret = "metrics-token-7f3a9c"
    env = {
        **os.environ,
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_LOG_LEVEL": "INFO",
        "UPTIME_METRICS_TOKEN": secret,
    }
    env.pop("UPTIME_DATABASE_URL", None)
    daemon = Daemon(env, "--no-scheduler")
    try:
        [line] = [line for line in daemon.log if " settings: " in line]
        logged = json.loads(line.split(" settings: ", 1)[1])
        assert logged["metrics_token"] == "<set>"
        assert logged["secret_key"] == "<set>"  # generated into the data dir
        assert logged["data_dir"] == str(tmp_path / "data")
    finally:
        assert_clean_exit(daemon)
    assert secret not in "".join(daemon.log)


def test_it_applies_its_collector_thresholds_once_started(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_LOG_LEVEL": "INFO",
        "UPTIME_GC_THRESHOLD": "5000,7,9",
    }
    env.pop("UPTIME_DATABASE_URL", None)
    daemon = Daemon(env, "--no-scheduler")
    assert_clean_exit(daemon)
    # The daemon's, and its database worker's (heartbeat pings are written there).
    lines = [line for line in daemon.log if "cycle collector: " in line]
    assert len(lines) == 2
    assert all("thresholds 5000,7,9" in line for line in lines)
    frozen = max(int(line.split(", ", 1)[1].split()[0]) for line in lines)
    assert frozen > 10_000  # modules, the app: what start-up made


def test_it_refuses_oversized_chunked_bodies(sqlite_daemon: Daemon) -> None:
    token = sqlite_daemon.session("daemon@example.com")

    def chunks() -> Iterator[bytes]:
        yield b'{"name": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    response = requests.post(
        f"{sqlite_daemon.base}/api/v1/monitors",
        data=chunks(),
        headers={"Cookie": f"session_cookie={token}", "Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert_clean_exit(sqlite_daemon)


def test_it_says_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "UPTIME_DATA_DIR": str(tmp_path / "data")}
        result = subprocess.run(
            [*uptime_command(), "server", "run", "--no-scheduler", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,  # a start on a loaded machine; the refusal comes as soon as it binds
        )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"uptime: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert "Traceback" not in result.stderr


def test_two_daemons_share_one_port_with_reuse_port(tmp_path: Path) -> None:
    """UPTIME_REUSE_PORT: a second, API-only daemon listens on the first one's port,
    and answers there on its own once the first has stopped."""
    env = {
        **os.environ,
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_LOG_LEVEL": "INFO",
        "UPTIME_SHUTDOWN_GRACE": "2",
        "UPTIME_REUSE_PORT": "true",
    }
    env.pop("UPTIME_DATABASE_URL", None)
    first = Daemon(env)
    try:
        second = Daemon(env, "--no-scheduler", "--port", str(first.port))
    except BaseException:
        first.proc.kill()
        raise
    try:
        assert second.port == first.port
        for _ in range(4):  # a new connection each: either daemon may take it
            assert requests.get(f"{first.base}/healthz", timeout=5).status_code == 200
        assert_clean_exit(first)
        for _ in range(4):
            health = requests.get(f"{second.base}/healthz", timeout=5)
            assert (health.status_code, health.json()["database"]) == (200, "ok")
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
        assert_clean_exit(second)


def test_it_stops_on_a_bad_setting(tmp_path: Path) -> None:
    env = {**os.environ, "UPTIME_DATA_DIR": str(tmp_path / "data"), "UPTIME_PORT": "http"}
    result = subprocess.run(
        [*uptime_command(), "server", "run"], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert (
        result.stderr
        == "uptime: configuration error: UPTIME_PORT: expected an integer, got 'http'\n"
    )
