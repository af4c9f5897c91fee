"""Process-level fixtures: `uptime server run` subprocesses, aiosmtpd, a target.

Everything listens on 127.0.0.1; each daemon gets its own API port and a log
file whose tail is printed when a test fails.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.notify.conftest import EphemeralPortController, RecordingHandler
from tests.notify.world import LOOPBACK, Target, messages

UPTIME = [sys.executable, "-m", "uptime_cli.main"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class DaemonProcess:
    env: dict[str, str]
    log_path: Path
    port: int = field(default_factory=free_port)
    extra_args: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> DaemonProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [*UPTIME, "server", "run", "--port", str(self.port), *self.extra_args],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_for(self._healthy, 90, f"the daemon on port {self.port}")
        return self

    def _healthy(self) -> bool:
        assert self.proc is not None and self.proc.poll() is None, self.log_tail()
        try:
            return requests.get(f"{self.base}/healthz", timeout=0.5).status_code == 200
        except requests.RequestException:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=5)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Cluster:
    """Daemons sharing one database, and a signed-in API session."""

    env: dict[str, str]
    tmp: Path
    daemons: list[DaemonProcess] = field(default_factory=list)
    token: str = ""

    def daemon(self) -> DaemonProcess:
        d = DaemonProcess(dict(self.env), self.tmp / f"daemon-{len(self.daemons)}.log")
        self.daemons.append(d)
        return d

    def sign_in(self, email: str = "owner@example.com") -> str:
        out = subprocess.run(
            [*UPTIME, "server", "session", "--email", email],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        self.token = out.stdout.strip()
        return self.token

    def api(self, daemon: DaemonProcess, method: str, path: str, **kw: Any) -> Any:
        r = requests.request(
            method,
            f"{daemon.base}/api/v1{path}",
            cookies={"session_cookie": self.token},
            timeout=10,
            **kw,
        )
        return r

    def add_monitor(self, daemon: DaemonProcess, name: str, url: str, **fields: Any) -> int:
        """Create an HTTP monitor of *url* expecting 200 through *daemon*'s API; its id."""
        body = {"name": name, "url": url, "type": "http", "expected_status": [200], **fields}
        r = self.api(daemon, "POST", "/monitors", json=body)
        assert r.status_code == 201, r.text
        return r.json()["data"]["id"]


@dataclass
class Mailbox:
    handler: RecordingHandler

    def subjects(self) -> list[str]:
        return [m["Subject"] for m in messages(self.handler)]

    def message_ids(self) -> list[str]:
        return [m["Message-ID"] for m in messages(self.handler)]


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    handler = RecordingHandler()
    controller = EphemeralPortController(
        handler, hostname=LOOPBACK, port=0, server_hostname="mx.test"
    )
    controller.start()
    yield Mailbox(handler), controller.port
    controller.stop()


@pytest.fixture
def target() -> Iterator[Target]:
    t = Target(status=503).start()
    yield t
    t.stop()


def cluster_env(tmp: Path, database_url: str, smtp_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_")}
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        env.pop(var, None)
    env.update(
        UPTIME_DATA_DIR=str(tmp / "data"),
        UPTIME_DATABASE_URL=database_url,
        UPTIME_SECRET_KEY="e2e-secret",
        UPTIME_SMTP_HOST=LOOPBACK,
        UPTIME_SMTP_PORT=str(smtp_port),
        UPTIME_SMTP_TLS="none",
        UPTIME_MAIL_FROM="uptime@example.com",
        UPTIME_MIN_CHECK_INTERVAL="1",
        UPTIME_LEASE_SECONDS="5",
        UPTIME_DELIVERY_LEASE_SECONDS="5",
        UPTIME_SHUTDOWN_GRACE="2",
        UPTIME_RATE_LIMIT="off",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


@pytest.fixture
def make_cluster(tmp_path: Path, mailbox: tuple[Mailbox, int], request: pytest.FixtureRequest):
    clusters: list[Cluster] = []

    def make(database_url: str | None = None) -> Cluster:
        url = database_url or f"sqlite:///{tmp_path / 'uptime.db'}"
        cluster = Cluster(cluster_env(tmp_path, url, mailbox[1]), tmp_path)
        clusters.append(cluster)
        return cluster

    yield make
    failed = getattr(request.node, "rep_call", None)
    for cluster in clusters:
        for d in cluster.daemons:
            if d.proc is not None:
                d.stop()
            if failed is not None and failed.failed:
                print(f"--- {d.log_path.name} ---\n{d.log_tail()}")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
    return report
