"""A fast HTTP and HTTPS target on 127.0.0.1, in a separate process.

nginx when it is installed (one worker, so the engine keeps the other core),
otherwise a small aiohttp server (``python -m bench.aiohttp_target``). Both
answer every request with 200 "ok" (``/nested``: ``NESTED_JSON``) and serve
TLS with a trustme certificate for 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import trustme

# 900 bytes of arrays nested 450 deep: `$..*..*..*` on it is cubic in the depth.
NESTED_JSON = "[" * 450 + "]" * 450

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log error;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    ssl_session_cache off;
    ssl_session_tickets off;
    server {{
        listen 127.0.0.1:{http_port} backlog=4096;
        listen 127.0.0.1:{https_port} ssl backlog=4096;
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;
        location / {{ return 200 "ok"; }}
        location = /nested {{ default_type application/json; return 200 '{nested}'; }}
    }}
}}
"""


@dataclass
class Target:
    kind: str
    http_url: str
    https_url: str
    ca_file: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        stop_process(self.process)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate *process*, killing it when it is still there after 10 s."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class HangServer:
    """A TCP listener on 127.0.0.1 that accepts connections and never answers.

    A check of ``url`` hangs until its own timeout; each connection is held
    for ``hold`` seconds, then closed. Runs in a daemon thread of the bench.
    """

    def __init__(self, hold: float = 30.0) -> None:
        self.hold = hold
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(4096)
        self._sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/hang"
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="hang", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        held: deque[tuple[float, socket.socket]] = deque()
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
                self.accepted += 1
                held.append((time.monotonic(), conn))
            except TimeoutError:
                pass
            while held and time.monotonic() - held[0][0] > self.hold:
                held.popleft()[1].close()
        for _, conn in held:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"target exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"target not listening on {port}")


def daemon_env(data_dir: Path, port: int, **settings: str) -> dict[str, str]:
    """The environment of a benchmarked daemon: none of ours inherited, then *settings*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPTIME_")}
    env.update(UPTIME_DATA_DIR=str(data_dir), UPTIME_PORT=str(port), UPTIME_LOG_LEVEL="WARNING")
    env.update(settings)
    return env


def start_daemon(
    env: dict[str, str], *args: str, log_name: str = "daemon.log", shares_port: bool = False
) -> subprocess.Popen[bytes]:
    """``uptime server run *args`` as ``make run`` starts it, logging to the data dir; once
    it listens on ``UPTIME_PORT``.

    *shares_port*: another daemon answers on that port already
    (``UPTIME_REUSE_PORT``), so this one is ready when its log says it listens.
    """
    uptime = Path(sys.executable).with_name("uptime")
    data_dir = Path(env["UPTIME_DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    if shares_port:
        env = {**env, "UPTIME_LOG_LEVEL": "INFO"}  # for its "API listening" line
    log_path = data_dir / log_name
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [str(uptime), "server", "run", *args], env=env, stdout=log, stderr=log
        )
    if not shares_port:
        wait_listening(int(env["UPTIME_PORT"]), process)
        return process
    deadline = time.monotonic() + 30
    while b"API listening" not in log_path.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_process(process)
            raise RuntimeError(f"daemon did not start:\n{log_path.read_text()[-2000:]}")
        time.sleep(0.05)
    return process


def start_target(workdir: Path, *, prefer_nginx: bool = True) -> Target:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(workdir / "ca.pem"))
    cert.cert_chain_pems[0].write_to_path(str(workdir / "cert.pem"))
    for pem in cert.cert_chain_pems[1:]:
        pem.write_to_path(str(workdir / "cert.pem"), append=True)
    cert.private_key_pem.write_to_path(str(workdir / "key.pem"))
    http_port, https_port = free_port(), free_port()
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if prefer_nginx and nginx:
        conf = workdir / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(
                dir=workdir, http_port=http_port, https_port=https_port, nested=NESTED_JSON
            )
        )
        cmd = [nginx, "-c", str(conf), "-e", str(workdir / "error.log")]
        kind = "nginx"
    else:
        cmd = [
            sys.executable,
            "-m",
            "bench.aiohttp_target",
            str(http_port),
            str(https_port),
            str(workdir / "cert.pem"),
            str(workdir / "key.pem"),
        ]
        kind = "aiohttp"
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    wait_listening(http_port, process)
    wait_listening(https_port, process)
    return Target(
        kind,
        f"http://127.0.0.1:{http_port}/",
        f"https://127.0.0.1:{https_port}/",
        str(workdir / "ca.pem"),
        process,
    )
