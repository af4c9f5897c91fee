"""A private PostgreSQL cluster on a free loopback port, for tests that restart it.

``tests.pg`` makes scratch databases on the shared test server, which no test
may stop. A test that restarts PostgreSQL under a daemon gets a cluster of its
own: ``initdb`` into a temporary directory, ``pg_ctl`` on a free port of
127.0.0.1 (its socket in that directory), trust authentication. initdb refuses
to run as root, so as root (CI runs the suite as root) the cluster belongs to
the ``postgres`` OS user and every command runs as that user (``runuser``).
No pytest here: ``PrivateCluster.binaries()`` is None where there is no
PostgreSQL to run, and the caller decides whether that skips or fails.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

OWNER = "postgres"  # the OS user the cluster runs as when the tests run as root


class PrivateCluster:
    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.log = root / "postgres.log"
        self.port = _free_port()
        self._as_owner: list[str] = []
        if os.geteuid() == 0:
            self._as_owner = ["runuser", "-u", OWNER, "--"]
            owner = pwd.getpwnam(OWNER)
            os.chown(root, owner.pw_uid, owner.pw_gid)

    @staticmethod
    def binaries() -> Path | None:
        """The newest installed PostgreSQL's bin directory (Debian's layout, else PATH), or None."""

        def version(initdb: str) -> int:
            name = Path(initdb).parents[1].name
            return int(name) if name.isdigit() else 0

        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
        if found:
            return Path(found[-1]).parent
        initdb = shutil.which("initdb")
        return Path(initdb).parent if initdb else None

    @property
    def url(self) -> str:
        return f"postgresql://{OWNER}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60) -> None:
        try:
            subprocess.run(
                [*self._as_owner, *args],
                check=True,
                capture_output=True,
                timeout=timeout,
                cwd=self.root,
            )
        except subprocess.CalledProcessError as exc:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            stderr = exc.stderr.decode(errors="replace")
            raise RuntimeError(f"{args[0]} failed: {stderr}\n{log}") from None

    def init(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            OWNER,
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "30",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def kill(self) -> None:
        """Stop at once, whatever state it is in (a finalizer)."""
        with contextlib.suppress(Exception):
            self.stop("immediate")


@contextlib.contextmanager
def private_cluster() -> Iterator[PrivateCluster]:
    """A running private cluster, removed when the block ends (even on failure)."""
    bindir = PrivateCluster.binaries()
    if bindir is None:
        raise FileNotFoundError("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    root = Path(tempfile.mkdtemp(prefix="uptime-pg-"))
    cluster = None
    try:
        cluster = PrivateCluster(bindir, root)
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        if cluster is not None:
            cluster.kill()
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
