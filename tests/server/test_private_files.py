"""The data dir is 0700 and the database, its WAL files and secret_key are 0600.

Issue: with UPTIME_SECRET_KEY set, the data dir was made by the database code
with the umask's mode (0755 under the usual 022), and SQLite made the database
and its -wal/-shm files 0644: readable by every local user, with session
hashes, monitor passwords and webhook tokens inside.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from uptime_server import db as dbmod
from uptime_server.config import Settings, load_settings
from uptime_server.daemon.process import prepare


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o002, 0o000], ids=lambda m: f"umask{m:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _settings(data_dir: Path, *, secret_key: str | None) -> Settings:
    env = {"UPTIME_DATA_DIR": str(data_dir)}
    if secret_key is not None:
        env["UPTIME_SECRET_KEY"] = secret_key
    return load_settings(env)


def _start_and_write(settings: Settings) -> None:
    """What a daemon start does, then a write, so SQLite has its -wal and -shm open."""
    prepare(settings)
    database = dbmod.database
    database.connect(reuse_if_open=True)
    database.execute_sql("CREATE TABLE IF NOT EXISTS probe_write (x INTEGER)")
    database.execute_sql("INSERT INTO probe_write VALUES (1)")


@pytest.mark.parametrize("secret_key", [None, "set-in-the-environment"], ids=["generated", "env"])
def test_a_fresh_data_dir_is_private(tmp_path: Path, umask: int, secret_key: str | None) -> None:
    data_dir = tmp_path / "state" / "uptime"
    settings = _settings(data_dir, secret_key=secret_key)
    try:
        _start_and_write(settings)
        db_file = data_dir / "uptime.db"
        wal, shm = Path(f"{db_file}-wal"), Path(f"{db_file}-shm")
        assert wal.exists() and shm.exists()
        assert _mode(data_dir) == 0o700
        assert {p.name: _mode(p) for p in (db_file, wal, shm)} == {
            "uptime.db": 0o600,
            "uptime.db-wal": 0o600,
            "uptime.db-shm": 0o600,
        }
    finally:
        dbmod.database.close()
    key_file = data_dir / "secret_key"
    if secret_key is None:
        assert _mode(key_file) == 0o600
    else:
        assert not key_file.exists()


def test_files_left_readable_by_an_earlier_version_are_tightened(tmp_path: Path) -> None:
    data_dir = tmp_path / "uptime"
    data_dir.mkdir(mode=0o755)
    os.chmod(data_dir, 0o755)
    old_files = ["uptime.db", "uptime.db-wal", "uptime.db-shm", "secret_key"]
    for name in old_files:
        (data_dir / name).write_text("an-old-key" if name == "secret_key" else "")
        os.chmod(data_dir / name, 0o644)

    settings = prepare(_settings(data_dir, secret_key=None))
    dbmod.database.close()

    assert settings.secret_key == "an-old-key"
    present = [name for name in old_files if (data_dir / name).exists()]
    assert "uptime.db" in present and "secret_key" in present
    assert {name: _mode(data_dir / name) for name in present} == dict.fromkeys(present, 0o600)
    # A directory that already existed is the user's: its mode is left alone.
    assert _mode(data_dir) == 0o755


def test_the_database_may_live_outside_the_data_dir(tmp_path: Path, umask: int) -> None:
    db_file = tmp_path / "elsewhere" / "db" / "uptime.db"
    settings = load_settings(
        {
            "UPTIME_DATA_DIR": str(tmp_path / "data"),
            "UPTIME_DATABASE_URL": f"sqlite:///{db_file}",
            "UPTIME_SECRET_KEY": "k",
        }
    )
    try:
        _start_and_write(settings)
        assert _mode(db_file.parent) == 0o700
        assert _mode(db_file) == 0o600
        assert _mode(Path(f"{db_file}-wal")) == 0o600
    finally:
        dbmod.database.close()
