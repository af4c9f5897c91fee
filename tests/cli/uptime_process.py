"""``uptime`` run as a real process: its own stdin, stdout, stderr and exit code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

UPTIME = [sys.executable, "-m", "uptime_cli"]


def process_env(config_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without its UPTIME_* and DISPLAY settings, plus *extra*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UPTIME_", "DISPLAY"))}
    env.update({"UPTIME_CONFIG_DIR": str(config_dir), "PYTHONUNBUFFERED": "1", **extra})
    return env


def default_sigint() -> None:
    """For ``preexec_fn``: a shell that starts jobs in the background makes them
    ignore SIGINT, and the ignore is inherited; give the default a terminal has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def python(code: str) -> list[str]:
    """A command for exec to run: this Python running *code*."""
    return [sys.executable, "-c", code]


def uptime(
    config_dir: Path, *args: str, input: bytes = b"", **env: str
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*UPTIME, *args],
        input=input,
        capture_output=True,
        env=process_env(config_dir, **env),
        timeout=60,
    )


def run_exec(
    config_dir: Path, url: str, command: list[str], *options: str, input: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """``UPTIME_PING_URL=url uptime exec [options] -- command``."""
    return uptime(config_dir, "exec", *options, "--", *command, input=input, UPTIME_PING_URL=url)


def warnings(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    lines = done.stderr.decode().splitlines()
    return [line for line in lines if line.startswith("uptime: warning: ")]
