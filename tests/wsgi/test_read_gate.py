"""The API read gate (read_gate.py): API reads one at a time, everything else untouched."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from uptime_server.app import create_app
from uptime_server.config import load_settings
from uptime_server.wsgi.context import app_state
from uptime_server.wsgi.read_gate import ReadGate, gated

WAIT = 10.0


class Holding:
    """A WSGI app whose requests to ``/api/v1/hold`` stay inside until released.

    Any other request stays inside for up to *linger* seconds, or until a
    second request is inside with it: without a gate, readers started together
    are then sure to overlap, and ``most_inside`` shows it.
    """

    def __init__(self, linger: float = 0.0) -> None:
        self.inside = 0
        self.most_inside = 0
        self.entered: list[str] = []
        self.lock = threading.Lock()
        self.held = threading.Event()
        self.release = threading.Event()
        self.crowded = threading.Event()
        self.linger = linger

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self.lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            if self.inside > 1:
                self.crowded.set()
            self.entered.append(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
        try:
            if environ["PATH_INFO"] == "/api/v1/hold":
                self.held.set()
                if not self.release.wait(WAIT):
                    raise AssertionError("the held request was never released")
            elif self.linger:
                self.crowded.wait(self.linger)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        finally:
            with self.lock:
                self.inside -= 1


def call(app: Any, method: str, path: str) -> bytes:
    got: list[str] = []
    body = app({"REQUEST_METHOD": method, "PATH_INFO": path}, lambda s, h: got.append(s))
    assert got == ["200 OK"]
    return b"".join(body)


class Call(threading.Thread):
    """``call`` in a thread of its own; ``result`` raises here what it raised there.

    An assertion inside a thread is only a warning, so nothing is asserted
    there: the test asks for the result, and a failure fails the test.
    """

    def __init__(self, app: Any, method: str, path: str, start: threading.Barrier | None) -> None:
        super().__init__(daemon=True)
        self.args_ = (app, method, path)
        self.start_together = start
        self.body: bytes | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            if self.start_together is not None:
                self.start_together.wait(WAIT)
            self.body = call(*self.args_)
        except BaseException as exc:  # handed to the test's thread by result()
            self.error = exc

    def result(self, timeout: float = WAIT) -> bytes:
        self.join(timeout)
        assert not self.is_alive(), f"{self.args_[1]} {self.args_[2]} did not finish in time"
        if self.error is not None:
            raise self.error
        assert self.body is not None
        return self.body


def in_thread(app: Any, method: str, path: str, start: threading.Barrier | None = None) -> Call:
    thread = Call(app, method, path, start)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("method", "path", "waits"),
    [
        ("GET", "/api/v1/monitors", True),
        ("GET", "/api/v1/monitors/7/stats", True),
        ("HEAD", "/api/v1/monitors/7", True),
        ("POST", "/api/v1/monitors", False),
        ("PUT", "/api/v1/monitors/7", False),
        ("DELETE", "/api/v1/monitors/7", False),
        ("GET", "/api/v1/auth/callback", False),  # waits on the identity provider
        ("GET", "/api/v1/auth/login", False),
        ("GET", "/healthz", False),
        ("GET", "/metrics", False),
        ("GET", "/ping/abc", False),
        ("GET", "/status/acme", False),
    ],
)
def test_only_api_reads_wait_for_the_gate(method: str, path: str, waits: bool) -> None:
    assert gated({"REQUEST_METHOD": method, "PATH_INFO": path}) is waits


def test_a_read_waits_for_the_one_inside_and_others_pass() -> None:
    inner = Holding()
    gate = ReadGate(inner, 1)
    first = in_thread(gate, "GET", "/api/v1/hold")
    assert inner.held.wait(WAIT)
    second = in_thread(gate, "GET", "/api/v1/monitors")
    # While the first read holds the slot, writes and sign-in pass straight in.
    assert call(gate, "POST", "/api/v1/monitors") == b"ok"
    assert call(gate, "GET", "/api/v1/auth/callback") == b"ok"
    second.join(0.2)
    assert second.is_alive(), "a second read entered while the first held the slot"
    assert "GET /api/v1/monitors" not in inner.entered
    inner.release.set()
    assert first.result() == second.result() == b"ok"
    assert inner.entered[-1] == "GET /api/v1/monitors"


def test_many_readers_never_overlap_inside_and_all_are_answered() -> None:
    # Each reader lingers inside (0.1 s, or until another one joins it), all
    # start at once: without the gate they overlap.
    inner = Holding(linger=0.1)
    gate = ReadGate(inner, 1)
    start = threading.Barrier(8)
    threads = [in_thread(gate, "GET", f"/api/v1/monitors/{i}", start) for i in range(8)]
    assert [t.result() for t in threads] == [b"ok"] * 8
    assert inner.most_inside == 1
    assert sorted(inner.entered) == sorted(f"GET /api/v1/monitors/{i}" for i in range(8))


def test_two_slots_let_two_reads_in() -> None:
    inner = Holding()
    gate = ReadGate(inner, 2)
    first = in_thread(gate, "GET", "/api/v1/hold")
    assert inner.held.wait(WAIT)
    assert call(gate, "GET", "/api/v1/monitors") == b"ok"  # the second slot
    inner.release.set()
    assert first.result() == b"ok"
    assert inner.most_inside == 2


def test_a_failing_read_frees_its_slot() -> None:
    def failing(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        raise RuntimeError("boom")

    gate = ReadGate(failing, 1)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            gate({"REQUEST_METHOD": "GET", "PATH_INFO": "/api/v1/monitors"}, lambda s, h: None)
    assert gate._free.acquire(blocking=False)


def test_no_slots_is_no_gate() -> None:
    with pytest.raises(ValueError):
        ReadGate(Holding(), 0)


@pytest.mark.parametrize(
    ("url", "gate"),
    [("sqlite:///{dir}/uptime.db", True), ("postgresql://127.0.0.1:9/none", False)],
)
def test_the_app_gates_reads_on_sqlite_only(tmp_path: Path, url: str, gate: bool) -> None:
    settings = load_settings(
        {
            "UPTIME_DATA_DIR": str(tmp_path),
            "UPTIME_DATABASE_URL": url.format(dir=tmp_path),
            "UPTIME_SECRET_KEY": "test",
        }
    )
    app = create_app(settings, bind_database=False)
    inner = app_state(app).fast_paths.app
    assert isinstance(inner, ReadGate) is gate
    if gate:
        assert inner.slots == 1
