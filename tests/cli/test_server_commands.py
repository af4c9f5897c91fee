"""``uptime server run|session|migrate``: the real daemon in a subprocess, driven by the CLI."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, base_env, describe


def daemon_env(tmp_path: Path) -> dict[str, str]:
    return {
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'uptime.db'}",
        "UPTIME_SECRET_KEY": "test-secret",
        "UPTIME_HOST": "127.0.0.1",
        "UPTIME_PORT": "0",
        "UPTIME_LOG_LEVEL": "INFO",
    }


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_")}
    env.update(daemon_env(tmp_path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "uptime_cli", "server", "run"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        url = _listening_url(proc)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _listening_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        match = re.search(r"API listening on (http://127\.0\.0\.1:\d+)", line)
        if match:
            # keep reading its log so a full pipe never blocks the daemon
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return match.group(1)
    raise AssertionError(f"the daemon did not start: {''.join(seen)}")


def test_the_daemon_serves_the_cli_and_stops_cleanly_on_sigterm(
    daemon: tuple[subprocess.Popen[str], str],
    tmp_path: Path,
    restore_binding: None,
) -> None:
    proc, url = daemon
    env = {**base_env(tmp_path / "config"), **daemon_env(tmp_path), "UPTIME_SERVER": url}
    cli = Cli(env)
    token = cli.ok("server", "session", "--email", "ops@example.com").stdout.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,}", token)
    cli.ok("login", "--with-token", input=token)
    monitor_id = cli.json("monitors", "add", "api", "http://127.0.0.1:9/health")["id"]
    assert [m["id"] for m in cli.json("monitors", "list")["data"]] == [monitor_id]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0


def test_migrate_creates_the_tables(tmp_path: Path, restore_binding: None) -> None:
    env = {**base_env(tmp_path / "config"), **daemon_env(tmp_path)}
    result = Cli(env)("server", "migrate")
    assert result.exit_code == 0, describe(result)
    assert "up to date" in result.stderr
    with sqlite3.connect(tmp_path / "data" / "uptime.db") as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"users", "monitors", "notifications"} <= tables


def test_session_rejects_a_bad_email(tmp_path: Path, restore_binding: None) -> None:
    env = {**base_env(tmp_path / "config"), **daemon_env(tmp_path)}
    result = Cli(env)("server", "session", "--email", "nope")
    assert result.exit_code == 2
    assert result.stdout == ""


def test_a_bad_setting_is_named(tmp_path: Path) -> None:
    env = {**base_env(tmp_path / "config"), **daemon_env(tmp_path), "UPTIME_PORT": "eighty"}
    result = Cli(env)("server", "migrate")
    assert result.exit_code == 1
    assert "UPTIME_PORT" in result.stderr
