"""wrk, the load generator of the HTTP benches: one run, and its figures parsed.

Used by ``api_load`` (bench-api), ``bench_pings`` and ``bench_status``; each
checks ``shutil.which("wrk")`` first and says what it does without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

# GET each of *paths* in turn; each wrk thread starts at its own offset.
CYCLE_LUA = """
local paths = {%s}
local i = 0
setup = function(thread)
  i = i + 1
  thread:set("offset", i * 7919)
end
init = function(args)
  i = offset or 0
end
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
"""


@dataclass
class WrkRun:
    rps: float
    requests: int
    wall_s: float  # the run's length as wrk measured it
    latency: dict[str, str]  # "50" / "99" -> wrk's text ("4.53ms"), with latency=True
    non_2xx: int  # answers other than 2xx or 3xx
    socket_errors: int
    detail: str  # wrk's lines about the errors, if any

    @property
    def errors(self) -> int:
        return self.non_2xx + self.socket_errors


def run(
    url: str,
    *,
    connections: int,
    seconds: float,
    paths: Sequence[str] = (),
    headers: Sequence[str] = (),
    latency: bool = False,
    threads: int = 2,
) -> WrkRun:
    """wrk against *url* (cycling over *paths* when given) for *seconds*."""
    threads = min(threads, connections)  # wrk refuses more threads than connections
    command = ["wrk", f"-c{connections}", f"-t{threads}", f"-d{seconds:g}s"]
    if latency:
        command.append("--latency")
    for header in headers:
        command += ["-H", header]
    script = None
    if paths:
        with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
            lua.write(CYCLE_LUA % ", ".join(f'"{p}"' for p in paths))
        script = lua.name
        command += ["-s", script]
    try:
        out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    finally:
        if script is not None:
            os.unlink(script)
    return parse(out)


def parse(out: str) -> WrkRun:
    done = re.search(r"(\d+) requests in ([\d.]+)(m?s)", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if done is None or rate is None:
        raise RuntimeError(f"wrk's output has no request count:\n{out}")
    total, wall, unit = done.groups()
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sockets = re.search(r"Socket errors: (.*)", out)
    return WrkRun(
        rps=float(rate.group(1)),
        requests=int(total),
        wall_s=float(wall) / (1000 if unit == "ms" else 1),
        latency=dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M)),
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=sum(int(n) for n in re.findall(r"\d+", sockets.group(1))) if sockets else 0,
        detail="; ".join(m.group(0).strip() for m in (sockets, non_2xx) if m is not None),
    )
