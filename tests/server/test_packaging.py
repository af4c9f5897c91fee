"""What an install needs: declared dependencies, the PostgreSQL extra, `make run`."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"uptime_server", "uptime_cli", "tests", "bench"}


def _requirement_names(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]) for r in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imports(folder: str) -> dict[str, set[str]]:
    """Dotted names of the modules imported under *folder*, with the files importing each."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _third_party(imports: dict[str, set[str]]) -> dict[str, set[str]]:
    return {
        name: files
        for name, files in imports.items()
        if name.split(".")[0] not in sys.stdlib_module_names | FIRST_PARTY
    }


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = _requirement_names(PROJECT["dependencies"])
EXTRAS = {k: _requirement_names(v) for k, v in PROJECT["optional-dependencies"].items()}


@pytest.mark.parametrize(
    ("folder", "allowed"),
    [
        ("uptime_server", RUNTIME | EXTRAS["postgres"]),
        ("uptime_cli", RUNTIME),
        ("tests", RUNTIME | EXTRAS["postgres"] | EXTRAS["dev"]),
        ("bench", RUNTIME | EXTRAS["postgres"] | EXTRAS["dev"]),
    ],
)
def test_every_third_party_import_is_declared(folder: str, allowed: set[str]) -> None:
    distributions = importlib.metadata.packages_distributions()
    undeclared = {
        name: sorted(files)
        for name, files in _third_party(_imports(folder)).items()
        if not {_normal(d) for d in distributions.get(name.split(".")[0], [])} & allowed
    }
    assert undeclared == {}


@pytest.mark.parametrize("folder", ["uptime_server", "uptime_cli", "tests", "bench"])
def test_no_private_module_of_another_package_is_imported(folder: str) -> None:
    private = {
        name: sorted(files)
        for name, files in _third_party(_imports(folder)).items()
        if any(part.startswith("_") for part in name.split("."))
    }
    assert private == {}


def test_a_postgresql_url_without_the_driver_names_the_extra(monkeypatch, tmp_path) -> None:
    from uptime_server.config import ConfigError, load_settings

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(ConfigError, match=re.escape("pip install 'uptime[postgres]'")):
        load_settings(
            {
                "UPTIME_DATA_DIR": str(tmp_path),
                "UPTIME_DATABASE_URL": "postgresql://127.0.0.1:5432/uptime",
            }
        )


SQLITE_WITHOUT_PSYCOPG2 = """
import pkgutil, sys
sys.modules["psycopg"] = None  # any `import psycopg` now fails, as without the extra
import uptime_cli, uptime_server
for package in (uptime_server, uptime_cli):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(".__main__"):
            __import__(module.name)
from uptime_cli.main import app
app(["server", "session", "--email", "alice@example.com"])
"""


def test_the_sqlite_path_needs_no_postgresql_driver(tmp_path: Path) -> None:
    env = {**os.environ, "UPTIME_DATA_DIR": str(tmp_path / "data")}
    env.pop("UPTIME_DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-c", SQLITE_WITHOUT_PSYCOPG2],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(result.stdout.strip()) >= 32  # the session token


def test_make_run_names_the_configured_address(tmp_path: Path) -> None:
    # A stand-in virtualenv whose `uptime` only echoes, so nothing is installed or started.
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").touch()
    (bin_dir / "uptime").write_text('#!/bin/sh\necho "uptime $*"\n')
    (bin_dir / "uptime").chmod(0o755)
    (tmp_path / "venv" / ".installed-run").touch()
    env = {**os.environ, "UPTIME_HOST": "::1", "UPTIME_PORT": "9123"}

    result = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "run", f"VENV={tmp_path / 'venv'}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "uptime server run\n"
    assert "starting the daemon on http://[::1]:9123\n" in result.stderr
    assert 'session_cookie=$TOKEN" http://[::1]:9123/api/v1/monitors' in result.stderr
    assert "8080" not in result.stderr
