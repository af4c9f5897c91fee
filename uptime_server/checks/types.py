"""What a check run is asked to do, and what it found: the probe's input and output.

The probe (``probe``), its pass rules (``checks.rules``), the spec builder
(``spec``), the probe loop and the recorder's input all speak these types, so
they live apart from any of them: the rules read a ``CheckSpec`` without
importing the prober (which imports the rules).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from uptime_server.models import DEFAULT_EXPECTED_STATUS

if TYPE_CHECKING:  # the database worker imports this module; cryptography stays out of it
    from uptime_server.net.certs import PeerCert

RETRY_DELAY_CAP = 10  # seconds; a retry waits min(check_interval, this)


@dataclass(frozen=True)
class CheckSpec:
    """One monitor's check, as the probe runs it (``spec.check_spec`` builds it from a row)."""

    url: str
    type: str = "http"  # picks the attempt function (engine/probes/registry.py)
    # The fields of this type only (models.TYPE_FIELDS), e.g. tls/send/expect for tcp.
    options: Mapping[str, Any] = field(default_factory=dict)
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    timeout: int = 30
    follow_redirects: bool = True
    verify_ssl: bool = True
    expected_status: tuple[int, ...] = tuple(DEFAULT_EXPECTED_STATUS)
    expected_content: str | None = None
    excluded_content: str | None = None
    json_path: str | None = None
    expected_json_value: str | None = None
    retry_count: int = 0
    check_interval: int = 60
    # Refuse loopback and private targets of this check even where the
    # process allows them (ProbeConfig.block_private): a probe agent runs a
    # server's checks under that server's policy, which each claim states.
    block_private: bool = False


@dataclass
class RunResult:
    """A check run: one attempt, or the summary of its attempts (``Prober.run``).

    The one result type from the probe to the recorder's input
    (``outcomes.CheckOutcome.from_run``): a single attempt is a run of one.
    """

    passed: bool
    response_time: int | None  # ms
    status_code: int | None
    error: str | None
    cert_expires_at: datetime | None = None
    attempts: int = 1
    retried: bool = False  # passed, but only after a retry
    # With cert_expires_at, which certificate it was (net/certs.PeerCert).
    cert_serial: str | None = None

    def with_cert(self, cert: PeerCert | None) -> RunResult:
        """This result carrying *cert*'s expiry and serial (None: no certificate seen)."""
        if cert is None:
            return self
        return replace(self, cert_expires_at=cert.not_after, cert_serial=cert.serial)

    # A probe that keeps its own schedule (heartbeat) says when its monitor
    # is due next, given the time its run is handed over; None: every
    # check_interval (dispatcher.next_due).
    next_due: Callable[[datetime], datetime] | None = None
    # A verdict drawn from the monitor's stored state rather than from a
    # target (heartbeat: "no ping came") holds only for the state it read:
    # the recorder drops it if the monitor's state_version moved since.
    expect_version: int | None = None


class Probing(Protocol):
    """What an attempt function gets from the process's prober (``probe.Prober``).

    Declared here so a probe module needs nothing of ``probe`` (which
    dispatches to them through the registry).
    """

    def blocks_private(self, spec: CheckSpec) -> bool: ...

    def ssl_context(self, verify: bool) -> ssl.SSLContext: ...

    async def http_attempt(self, spec: CheckSpec) -> RunResult: ...
