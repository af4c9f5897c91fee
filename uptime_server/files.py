"""The daemon's files are its owner's alone: directories 0700, files 0600.

The data dir holds the SQLite database (session hashes, monitor URLs with
passwords, request headers, Slack webhook tokens), the secret key and the
email outbox. Modes are set explicitly rather than left to the umask.

SQLite creates its -wal, -shm and -journal files with the mode of the
database file, whatever the umask, so a database file that is 0600 before
SQLite first opens it keeps all of them 0600; an existing database is
tightened along with any of those files left from an earlier run.

A directory that already exists keeps its mode: it may be one the user made
(UPTIME_DATA_DIR, a systemd StateDirectory) for reasons of their own. Files
the daemon owns are tightened on every start.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_dir(path: Path) -> None:
    """Create *path* (and missing parents) with *path* itself 0700."""
    if path.is_dir():
        return
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    # mkdir's mode is masked by the umask; the result must not depend on it.
    os.chmod(path, DIR_MODE)


def create_private_file(path: Path, content: str) -> bool:
    """Write a new 0600 file; False (and nothing written) if it already exists."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), FILE_MODE)  # the umask may have taken bits from 0600
        fh.write(content)
    return True


def tighten(path: Path) -> None:
    """Take every group and other permission off an existing file of ours."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, mode & 0o700)
    except FileNotFoundError:
        pass
    except OSError as exc:  # not ours (e.g. made by root): say so, but run
        log.warning("cannot make %s private: %s", path, exc.strerror or exc)


def private_sqlite_database(path: Path) -> None:
    """Before SQLite opens *path*: its directory 0700, it and its companions 0600."""
    private_dir(path.parent)
    # An empty file is a valid empty database to SQLite.
    if not create_private_file(path, ""):
        tighten(path)
    for suffix in SQLITE_COMPANIONS:
        tighten(path.with_name(path.name + suffix))
