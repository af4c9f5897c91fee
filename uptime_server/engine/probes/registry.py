"""Which attempt function checks which monitor type.

``Prober.run`` keeps the retry loop and hands each attempt to
``ATTEMPTS[spec.type]``. Adding a type is one module with an attempt function
and one line here (plus the type in ``models.CHECKED_TYPES``, which the
scheduler's claim query reads; tests/engine/test_probe_registry.py keeps the
two equal). An attempt function never raises (except cancellation): every
failure is a ``RunResult`` with a short error, within ``spec.timeout``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from uptime_server.checks.types import CheckSpec, Probing, RunResult
from uptime_server.engine.probes.dns import dns_check
from uptime_server.engine.probes.icmp import ping_check
from uptime_server.engine.probes.tcp import tcp_attempt
from uptime_server.engine.probes.udp import udp_check
from uptime_server.heartbeats.verdict import heartbeat_check

AttemptFn = Callable[[Probing, CheckSpec], Awaitable[RunResult]]


async def _http_attempt(prober: Probing, spec: CheckSpec) -> RunResult:
    return await prober.http_attempt(spec)


ATTEMPTS: dict[str, AttemptFn] = {
    "http": _http_attempt,
    "https": _http_attempt,
    "tcp": tcp_attempt,
    "udp": udp_check,
    "dns": dns_check,
    "ping": ping_check,
    "heartbeat": heartbeat_check,
}
