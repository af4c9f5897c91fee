"""The suite's PostgreSQL rule (tests/conftest.py), run on a tiny test file in a child pytest.

PostgreSQL "down" is a closed port on 127.0.0.1 (``UPTIME_TEST_PG_URL``).
Without ``UPTIME_SKIP_PG=1`` the run stops before any test with one message
that says how to opt out; with it the PostgreSQL variants are skipped and the
summary says so; under CI the opt-out is refused.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
ON_BOTH = "def test_on_both(db_url):\n    assert db_url\n"
NO_DATABASE = "def test_no_database():\n    assert True\n"


@pytest.fixture(scope="module")
def down_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"postgresql://postgres@127.0.0.1:{port}/test"


def run(
    tmp_path: Path, source: str, down_url: str, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """pytest with the suite's conftest as a plugin on a file holding *source*."""
    (tmp_path / "test_tiny.py").write_text(source)
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "UPTIME_REQUIRE_PG", "UPTIME_SKIP_PG", "PYTEST_ADDOPTS")
        and not k.startswith("PYTEST_XDIST")
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider"]
        + ["-p", "no:randomly", "-q", *args, "test_tiny.py"],
        cwd=tmp_path,
        env={**clean, "PYTHONPATH": str(ROOT), "UPTIME_TEST_PG_URL": down_url, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_postgresql_down_stops_the_run_with_one_message(
    tmp_path: Path, down_url: str, workers: list[str]
) -> None:
    done = run(tmp_path, ON_BOTH, down_url, *workers)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert output.count("is unreachable") == 1, output
    assert f"PostgreSQL at 127.0.0.1:{down_url.rsplit(':', 1)[1]}" in output
    assert "set UPTIME_SKIP_PG=1 to skip the PostgreSQL" in output
    assert "passed" not in output and "skipped" not in output


def test_with_uptime_skip_pg_the_variants_are_skipped_and_the_summary_says_so(
    tmp_path: Path, down_url: str
) -> None:
    done = run(tmp_path, ON_BOTH, down_url, "-rs", UPTIME_SKIP_PG="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped" in done.stdout
    assert "PostgreSQL variant skipped: UPTIME_SKIP_PG=1" in done.stdout
    assert "1 PostgreSQL variants were skipped: this run tested the database on SQLite only" in (
        done.stdout
    )


def test_under_ci_the_opt_out_is_refused(tmp_path: Path, down_url: str) -> None:
    done = run(tmp_path, ON_BOTH, down_url, UPTIME_SKIP_PG="1", CI="1")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "UPTIME_SKIP_PG=1 is refused here" in done.stdout + done.stderr


def test_one_process_without_postgresql_tests_does_not_need_it(
    tmp_path: Path, down_url: str
) -> None:
    done = run(tmp_path, NO_DATABASE, down_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
