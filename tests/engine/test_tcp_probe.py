"""The tcp probe against real sockets on 127.0.0.1 (engine/probes/tcp.py)."""

from __future__ import annotations

import datetime as dt
import socket
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Reply, recv_until
from tests.engine.conftest import TLSServers, run_check
from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import ProbeConfig


def tcp_spec(port: int, host: str = "127.0.0.1", timeout: int = 5, **options: Any) -> CheckSpec:
    verify = options.pop("verify_ssl", True)
    return CheckSpec(
        url=f"tcp://{host}:{port}", type="tcp", timeout=timeout, verify_ssl=verify, options=options
    )


def banner(sock: socket.socket) -> None:
    sock.sendall(b"220 mail.internal ESMTP ready\r\n")


def pong(sock: socket.socket) -> None:
    received = recv_until(sock, b"\r\n", 100)
    if b"\r\n" not in received:
        return
    sock.sendall(b"+PONG\r\n" if received == b"PING\r\n" else b"-ERR what\r\n")


def test_a_listening_port_passes_on_connect(hanging_port: int, connections: list) -> None:
    result = run_check(tcp_spec(hanging_port))
    assert (result.passed, result.error, result.status_code) == (True, None, None)
    assert isinstance(result.response_time, int)
    assert connections == [("127.0.0.1", hanging_port)]


def test_a_closed_port_is_refused(refused_port: int) -> None:
    result = run_check(tcp_spec(refused_port))
    assert (result.passed, result.error, result.response_time) == (
        False,
        "connection refused",
        None,
    )


def test_a_server_that_never_answers_hits_the_deadline(hanging_port: int) -> None:
    result = run_check(tcp_spec(hanging_port, timeout=1, expect="220"))
    assert (result.passed, result.error) == (False, "timeout after 1s")


def test_a_banner_is_expected(tcp_server: Callable[[Reply], int]) -> None:
    port = tcp_server(banner)
    assert run_check(tcp_spec(port, expect="220 ")).passed
    result = run_check(tcp_spec(port, expect="554"))
    # The peer's bytes are never quoted.
    assert (result.passed, result.error) == (False, "expected text not received")


def test_what_is_sent_has_its_escapes_applied(tcp_server: Callable[[Reply], int]) -> None:
    port = tcp_server(pong)
    assert run_check(tcp_spec(port, send="PING\\r\\n", expect="+PONG")).passed
    result = run_check(tcp_spec(port, send="PING\\n\\r\\n", expect="+PONG"))
    assert (result.passed, result.error) == (False, "expected text not received")


def test_a_stored_send_with_a_bad_escape_fails_the_run(hanging_port: int) -> None:
    result = run_check(tcp_spec(hanging_port, send="\\q"))
    assert not result.passed
    assert result.error.startswith("invalid monitor: ")


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_tls_reports_the_certificate_expiry(tls: TLSServers) -> None:
    config = ProbeConfig(ca_bundle=tls.ca_file)
    valid = run_check(tcp_spec(_port(tls.valid), tls=True), config)
    assert (valid.passed, valid.error) == (True, None)
    assert valid.cert_expires_at is not None
    expiring = run_check(tcp_spec(_port(tls.expiring), tls=True), config)
    assert (expiring.passed, expiring.cert_expires_at) == (True, tls.expiring_at)


def test_tls_verification_is_honoured(tls: TLSServers) -> None:
    config = ProbeConfig(ca_bundle=tls.ca_file)
    expired = run_check(tcp_spec(_port(tls.expired), tls=True), config)
    assert not expired.passed
    assert expired.error == "TLS certificate verify failed: certificate has expired"
    lenient = run_check(tcp_spec(_port(tls.expired), tls=True, verify_ssl=False), config)
    assert lenient.passed
    assert lenient.cert_expires_at < dt.datetime.now(dt.UTC)
    wrong = run_check(tcp_spec(_port(tls.wrong_host), tls=True), config)
    assert not wrong.passed
    assert wrong.error.startswith("TLS certificate verify failed")
    # Untrusted without the test CA.
    untrusted = run_check(tcp_spec(_port(tls.valid), tls=True))
    assert (untrusted.passed, untrusted.cert_expires_at) == (False, None)


def test_tls_checks_the_host_name_of_the_url(tls: TLSServers, fake_dns: dict) -> None:
    # The certificate names 127.0.0.1 and localhost, not db.test: the name is
    # what the handshake checks, not the address dialled.
    fake_dns["db.test"] = ["127.0.0.1"]
    config = ProbeConfig(ca_bundle=tls.ca_file)
    result = run_check(tcp_spec(_port(tls.valid), host="db.test", tls=True), config)
    assert not result.passed
    assert "db.test" in result.error
    lenient = run_check(
        tcp_spec(_port(tls.valid), host="db.test", tls=True, verify_ssl=False), config
    )
    assert lenient.passed


def test_a_host_name_is_resolved_once_and_that_address_dialled(
    hanging_port: int, fake_dns: dict, connections: list
) -> None:
    fake_dns["db.test"] = ["127.0.0.1"]
    assert run_check(tcp_spec(hanging_port, host="db.test")).passed
    assert connections == [("127.0.0.1", hanging_port)]
    result = run_check(tcp_spec(hanging_port, host="missing.test"))
    assert (result.passed, result.error) == (False, "DNS lookup failed: missing.test")


@pytest.mark.parametrize("host", ["0.0.0.0", "[::]"])
def test_targets_never_allowed_are_refused_without_a_packet(
    hanging_port: int, connections: list, host: str
) -> None:
    result = run_check(tcp_spec(hanging_port, host=host))
    assert (result.passed, result.error) == (False, "target address not allowed")
    assert connections == []


def test_loopback_is_refused_when_private_targets_are_blocked(
    hanging_port: int, fake_dns: dict, connections: list
) -> None:
    blocked = ProbeConfig(block_private=True)
    result = run_check(tcp_spec(hanging_port), blocked)
    assert (result.passed, result.error) == (False, "target address not allowed")
    fake_dns["db.test"] = ["127.0.0.1"]
    result = run_check(tcp_spec(hanging_port, host="db.test"), blocked)
    assert (result.passed, result.error) == (False, "target address not allowed")
    assert connections == []


def test_retries_go_through_the_shared_loop(refused_port: int) -> None:
    spec = tcp_spec(refused_port)
    result = run_check(CheckSpec(**{**spec.__dict__, "retry_count": 2}))
    assert (result.passed, result.attempts, result.error) == (False, 3, "connection refused")
