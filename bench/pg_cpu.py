"""The PostgreSQL server's CPU seconds so far, read from ``/proc`` (benches only)."""

from __future__ import annotations

import os


def postgres_cpu_s() -> float:
    """CPU seconds of the PostgreSQL server so far (other users' work too).

    Backends end with their connections: their time is the postmaster's
    reaped children's time (cutime, cstime), counted here with the rest.
    Nothing (0.0) where no process is named ``postgres``.
    """
    total = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() != "postgres":
                    continue
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
            # utime, stime, and the reaped children's (backends that exited)
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return total
