"""prometheus-blackbox-exporter's probers, as a yardstick for our checks.

The exporter runs in its own process on 127.0.0.1 at a free port with a
generated config (a ``tcp_connect`` module and an ``http_2xx`` one that trusts
the bench target's CA, timeout 5s each); a bounded number of
aiohttp clients drive ``/probe?module=...&target=...`` for a fixed
time over keep-alive connections, counting answers with ``probe_success 1``.
Nothing is installed here: when the binary is missing the caller prints how to
install it and skips the column.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.engine_run import cpu_s
from bench.target import free_port, stop_process, wait_listening

INSTALL_HINT = "apt-get install prometheus-blackbox-exporter"
CONFIG = """modules:
  tcp_connect:
    prober: tcp
    timeout: 5s
    tcp:
      preferred_ip_protocol: ip4
  http_2xx:
    prober: http
    timeout: 5s
    http:
      preferred_ip_protocol: ip4
      tls_config:
        ca_file: {ca_file}
"""


def find_binary() -> str | None:
    default = Path("/usr/bin/prometheus-blackbox-exporter")
    return shutil.which("prometheus-blackbox-exporter") or (
        str(default) if default.exists() else None
    )


@dataclass
class BlackboxResult:
    probes_s: float  # probe_success=1 answers per second
    failed: int  # answers with probe_success 0, or errors
    cpu_s: float  # the exporter's CPU seconds over the run
    client_cpu_s: float  # the driving clients' CPU seconds (this process)


class Blackbox:
    """A running exporter bound to loopback; ``stop()`` ends it."""

    def __init__(self, binary: str, workdir: Path, ca_file: str = "") -> None:
        config = workdir / "blackbox.yml"
        config.write_text(CONFIG.format(ca_file=ca_file or "/etc/ssl/certs/ca-certificates.crt"))
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=error",
                # Keep the probe's deadline at the module's 5s, not 5s - 0.5.
                "--timeout-offset=0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_listening(self.port, self.process)
        except RuntimeError:
            self.stop()
            raise

    def _process_cpu_s(self) -> float:
        return cpu_s(f"/proc/{self.process.pid}/stat")

    def measure(
        self, target: str, *, concurrency: int, seconds: float, module: str = "tcp_connect"
    ) -> BlackboxResult:
        """Saturate ``/probe`` on *target* (``host:port``, or a URL for ``http_2xx``)."""
        cpu, client_cpu = self._process_cpu_s(), time.process_time()
        ok, failed = asyncio.run(self._drive(target, concurrency, seconds, module))
        return BlackboxResult(
            ok / seconds, failed, self._process_cpu_s() - cpu, time.process_time() - client_cpu
        )

    async def _drive(
        self, target: str, concurrency: int, seconds: float, module: str
    ) -> tuple[int, int]:
        url = f"http://127.0.0.1:{self.port}/probe"
        params = {"module": module, "target": target}
        ok = failed = 0
        connector = aiohttp.TCPConnector(limit=concurrency)
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            deadline = time.perf_counter() + seconds

            async def worker() -> None:
                nonlocal ok, failed
                while time.perf_counter() < deadline:
                    try:
                        async with session.get(url, params=params) as resp:
                            body = await resp.text()
                    except (aiohttp.ClientError, TimeoutError):
                        failed += 1
                        continue
                    # Only answers that arrive inside the window count.
                    if time.perf_counter() > deadline:
                        return
                    if "\nprobe_success 1\n" in f"\n{body}":
                        ok += 1
                    else:
                        failed += 1

            await asyncio.gather(*(worker() for _ in range(concurrency)))
        return ok, failed

    def stop(self) -> None:
        stop_process(self.process)
