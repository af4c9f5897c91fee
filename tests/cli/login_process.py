"""``uptime login`` run as a real process, and the sign-in URL it prints."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.cli.uptime_process import UPTIME, default_sigint, process_env

URL_LINE = re.compile(r"^(http://127\.0\.0\.1:\d+/api/v1/auth/\w+/login\?\S+)$", re.M)


def start_uptime(args: list[str], config_dir: Path) -> subprocess.Popen[str]:
    """``python -m uptime_cli ARGS`` with no UPTIME_* or DISPLAY setting of the caller's."""
    return subprocess.Popen(
        [*UPTIME, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(config_dir),
        # A shell that starts jobs in the background makes them ignore SIGINT,
        # and the ignore is inherited: give the CLI the default a terminal has.
        preexec_fn=default_sigint,
    )


def read_login_url(proc: subprocess.Popen[str]) -> tuple[str, list[str]]:
    """The sign-in URL from the process's stderr, and the lines read up to it."""
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:
        seen.append(line)
        match = URL_LINE.match(line.strip())
        if match:
            return match.group(1), seen
    raise AssertionError(f"no sign-in URL printed: {''.join(seen)}")
