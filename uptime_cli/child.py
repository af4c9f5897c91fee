"""Running a command for ``uptime exec``: output passed through, its tail kept.

The command inherits our stdin. Its stdout and stderr are pipes, each read by
a thread that writes every chunk on to our own stdout or stderr unchanged and
keeps a copy of the last ``limit`` bytes of both, in the order the chunks
were read: the run's message. Each pipe is drained as soon as the command
writes, so the command never waits on us; it waits only when whoever reads
our output does, as it would without us. When our stdout is closed (``| head``),
the pipe is closed too, so the command gets the EPIPE it would have got.

Exit code, as a shell reports it: the command's own; 128 + N when a signal N
killed it; 127 when it was not found, 126 when it could not be executed.
While the command runs, SIGTERM and SIGHUP sent to us are passed on to it
(``systemctl stop``, a closed terminal), and SIGINT is ignored here: Ctrl-C
reaches the command from the terminal, and its exit code is what we report.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

CHUNK = 64 * 1024
NOT_FOUND = 127
NOT_EXECUTABLE = 126
_FORWARDED = (signal.SIGTERM, signal.SIGHUP)


@dataclass(frozen=True)
class Finished:
    exit_code: int
    output: bytes  # the last bytes of stdout and stderr together
    error: str | None = None  # why the command did not start


class OutputTail:
    """The last *limit* bytes of what several threads add, in the order added."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data = bytearray()
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            if len(self._data) > 2 * self.limit:  # trim now and then, not on every chunk
                del self._data[: -self.limit]

    def value(self) -> bytes:
        with self._lock:
            return bytes(self._data[-self.limit :])


def run(argv: list[str], stdout: BinaryIO, stderr: BinaryIO, limit: int) -> Finished:
    """Run *argv* to its end, teeing its output into *stdout*/*stderr* and the tail."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    except OSError as exc:
        return _not_started(argv[0], exc)
    tail = OutputTail(limit)
    pumps = [
        threading.Thread(target=_pump, args=(pipe, sink, tail), daemon=True)
        for pipe, sink in ((proc.stdout, stdout), (proc.stderr, stderr))
    ]
    # Handlers first: once the command's output shows, a signal sent to us
    # because of it must reach the command.
    with _forwarding_signals(proc.send_signal):
        for pump in pumps:
            pump.start()
        code = proc.wait()
        for pump in pumps:
            pump.join()
    return Finished(128 - code if code < 0 else code, tail.value())


def _not_started(program: str, exc: OSError) -> Finished:
    if isinstance(exc, FileNotFoundError):
        return Finished(NOT_FOUND, b"", f"{program}: command not found")
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM):
        return Finished(NOT_EXECUTABLE, b"", f"{program}: {reason}")
    return Finished(NOT_EXECUTABLE, b"", f"{program}: cannot run it: {reason}")


def _pump(pipe: BinaryIO | None, sink: BinaryIO, tail: OutputTail) -> None:
    assert pipe is not None
    with pipe:
        fd = pipe.fileno()
        while chunk := os.read(fd, CHUNK):
            tail.add(chunk)
            try:
                sink.write(chunk)
                sink.flush()
            except (BrokenPipeError, ValueError):  # our reader went away, or sink closed
                return  # closing the pipe hands the EPIPE on to the command


@contextmanager
def _forwarding_signals(forward: Callable[[int], None]) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be set from the main thread
        return
    before = {sig: signal.getsignal(sig) for sig in (*_FORWARDED, signal.SIGINT)}
    try:
        for sig in _FORWARDED:
            signal.signal(sig, lambda signum, _frame: forward(signum))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
