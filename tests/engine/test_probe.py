"""The probe against real servers on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from uptime_server.checks.json_path import validate_json_path
from uptime_server.checks.types import CheckSpec, RunResult
from uptime_server.engine.probe import ProbeConfig, Prober, run_check_sync
from uptime_server.net.certs import peer_cert

from .conftest import ServerThread, TLSServers, run_check
from .targets import CountingServer


def test_it_passes_on_200(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/ok"))
    assert result.passed and result.error is None
    assert result.status_code == 200
    assert isinstance(result.response_time, int) and 0 <= result.response_time < 2000
    assert (result.attempts, result.retried, result.cert_expires_at) == (1, False, None)


def test_it_fails_on_unexpected_status(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/status/503", expected_status=(200,)))
    assert not result.passed
    assert result.error == "expected status in [200], got 503"
    assert result.status_code == 503
    assert result.response_time is not None


def test_default_expected_status_lists_every_2xx_success(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/status/226")).passed
    result = run_check(CheckSpec(f"{http_url}/status/404"))
    assert result.error == (
        "expected status in [200, 201, 202, 203, 204, 205, 206, 207, 208, 226], got 404"
    )


def test_it_accepts_any_listed_status(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/status/503", expected_status=(200, 503))).passed


def test_expected_content(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/ok", expected_content="all ok")).passed
    result = run_check(CheckSpec(f"{http_url}/ok", expected_content="ALL OK"))  # case-sensitive
    assert result.error == 'expected content "ALL OK" not found'
    assert result.status_code == 200


def test_expected_content_decodes_the_charset(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/text", expected_content="café")).passed  # UTF-8
    # The same words in ISO-8859-1, as the server declares: read as UTF-8, the
    # é would be U+FFFD and neither check below would hold.
    assert run_check(CheckSpec(f"{http_url}/latin1", expected_content="café")).passed
    result = run_check(CheckSpec(f"{http_url}/latin1", excluded_content="café"))
    assert result.error == 'excluded content "café" found'


def test_excluded_content(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/ok", excluded_content="error")).passed
    result = run_check(CheckSpec(f"{http_url}/ok", excluded_content="ok"))
    assert result.error == 'excluded content "ok" found'


def test_status_is_checked_before_content(http_url: str) -> None:
    spec = CheckSpec(f"{http_url}/status/500", expected_content="nope", expected_status=(200,))
    assert run_check(spec).error == "expected status in [200], got 500"


@pytest.mark.parametrize(
    "path, expected",
    [
        ("$.status", "up"),
        ("$.count", "42"),
        ("$.ratio", "0.5"),
        ("$.flag", "true"),
        ("$.nothing", "null"),
        ("$.nested.items[1].name", "b"),
        ("$.nested.items[?name = 'a'].name", "a"),  # jsonpath_ng.ext filter
        ("$.nested.items[*].name", "a"),  # the first match counts
    ],
)
def test_json_path_values(http_url: str, path: str, expected: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/json", json_path=path, expected_json_value=expected))
    assert result.passed, result.error


def test_json_path_without_expected_value_needs_a_match(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/json", json_path="$.status")).passed
    result = run_check(CheckSpec(f"{http_url}/json", json_path="$.missing"))
    assert result.error == "JSONPath $.missing: no match"


def test_json_path_mismatch_does_not_quote_the_value_found(http_url: str) -> None:
    # The value found stays out of the error: it would let a user read a
    # service's JSON one field at a time.
    spec = CheckSpec(f"{http_url}/json", json_path="$.status", expected_json_value="down")
    assert run_check(spec).error == 'JSONPath $.status: expected "down", did not match'
    spec = CheckSpec(f"{http_url}/json", json_path="$.flag", expected_json_value="True")
    assert run_check(spec).error == 'JSONPath $.flag: expected "True", did not match'


def test_json_path_on_a_body_that_is_not_json(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/text", json_path="$.status"))
    assert result.error == "response is not JSON"


def test_validate_json_path() -> None:
    assert validate_json_path("$.status") is None
    assert validate_json_path("$.items[?name = 'a'].id") is None
    assert validate_json_path("$.[[[") is not None
    assert validate_json_path("") is not None


def test_method_headers_and_body_are_sent(http_url: str) -> None:
    spec = CheckSpec(
        f"{http_url}/echo",
        method="post",
        headers={"X-Probe": "1", "Content-Type": "application/json"},
        body='{"ping": true}',
        expected_content='"method": "POST"',
        json_path="$.body",
        expected_json_value='{"ping": true}',
    )
    result = run_check(spec)
    assert result.passed, result.error


def test_default_user_agent_and_override(http_url: str) -> None:
    spec = CheckSpec(f"{http_url}/echo", json_path="$.headers.User-Agent")
    assert run_check(spec, ProbeConfig(user_agent="uptime/test")).passed
    spec_value = CheckSpec(
        f"{http_url}/echo", json_path="$.headers.User-Agent", expected_json_value="uptime/test"
    )
    assert run_check(spec_value, ProbeConfig(user_agent="uptime/test")).passed
    custom = CheckSpec(
        f"{http_url}/echo",
        headers={"user-agent": "mine"},
        json_path="$.headers.User-Agent",
        expected_json_value="mine",
    )
    assert run_check(custom).passed


def test_credentials_in_the_url_become_basic_auth(http_url: str) -> None:
    url = http_url.replace("http://", "http://alice:s3cret@") + "/echo"
    spec = CheckSpec(
        url, json_path="$.headers.Authorization", expected_json_value="Basic YWxpY2U6czNjcmV0"
    )
    assert run_check(spec).passed


@pytest.mark.parametrize(
    "url, error",
    [
        ("http://[::1/", "invalid URL"),
        ("http:///no-host", "URL has no host"),
        ("mailto:someone@example.com", "unsupported URL scheme: mailto"),
    ],
)
def test_bad_urls_fail_with_a_message(url: str, error: str) -> None:
    assert run_check(CheckSpec(url)).error == error


def test_a_header_aiohttp_refuses_is_an_error_not_a_crash(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/ok", headers={"X-Bad": "a\r\nInjected: 1"}))
    assert not result.passed
    assert result.error is not None and result.error.startswith("invalid request")


def test_head_request(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/ok", method="HEAD"))
    assert result.passed and result.status_code == 200


def test_cookies_do_not_carry_over_between_checks(http_url: str) -> None:
    # By name, not by IP: aiohttp's own jar keeps no cookies of IP addresses,
    # so on 127.0.0.1 a shared jar would pass this test.
    url = http_url.replace("127.0.0.1", "localhost")

    async def go() -> RunResult:
        async with Prober() as prober:
            assert (await prober.run(CheckSpec(f"{url}/set-cookie"))).passed
            return await prober.run(CheckSpec(f"{url}/echo", excluded_content="secret"))

    result = asyncio.run(go())
    assert result.passed, result.error


# --- retries ---------------------------------------------------------------


def test_a_retry_that_passes_is_marked_retried(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/flaky/{uuid.uuid4()}", retry_count=2))
    assert result.passed and result.retried
    assert result.attempts == 2
    assert result.status_code == 200 and result.error is None


def test_all_attempts_failing(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/status/500", retry_count=2))
    assert not result.passed and not result.retried
    assert result.attempts == 3
    assert result.status_code == 500


def test_retries_wait_min_of_interval_and_ten_seconds(http_url: str) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def go(spec: CheckSpec) -> RunResult:
        async with Prober() as prober:
            return await prober.run(spec, sleep=sleep)

    asyncio.run(go(CheckSpec(f"{http_url}/status/500", retry_count=2, check_interval=60)))
    asyncio.run(go(CheckSpec(f"{http_url}/status/500", retry_count=1, check_interval=3)))
    asyncio.run(go(CheckSpec(f"{http_url}/ok", retry_count=3)))  # passes: no wait
    assert waits == [10, 10, 3]


def test_attempt_returns_one_attempt(http_url: str) -> None:
    async def go() -> RunResult:
        async with Prober() as prober:
            return await prober.attempt(CheckSpec(f"{http_url}/flaky/{uuid.uuid4()}"))

    result = asyncio.run(go())
    assert not result.passed and result.status_code == 503


def test_run_check_sync_from_a_worker_thread(http_url: str) -> None:
    results: list[RunResult] = []
    spec = CheckSpec(f"{http_url}/ok", expected_content="ok")
    worker = threading.Thread(target=lambda: results.append(run_check_sync(spec, ProbeConfig())))
    worker.start()
    worker.join(timeout=10)
    assert results and results[0].passed


# --- redirects -------------------------------------------------------------


def test_redirects_are_followed(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/redirect/3", expected_content="all ok"))
    assert result.passed and result.status_code == 200


def test_ten_redirects_are_allowed_eleven_are_not(http_url: str) -> None:
    assert run_check(CheckSpec(f"{http_url}/redirect/9")).passed  # 10 redirects
    result = run_check(CheckSpec(f"{http_url}/redirect/10"))
    assert result.error == "too many redirects"


def test_redirect_loop(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/loop"))
    assert not result.passed and result.error == "too many redirects"


def test_not_following_makes_the_3xx_final(http_url: str) -> None:
    spec = CheckSpec(f"{http_url}/redirect/1", follow_redirects=False)
    assert run_check(spec).error.endswith("got 302")
    spec = CheckSpec(f"{http_url}/redirect/1", follow_redirects=False, expected_status=(302,))
    assert run_check(spec).passed


@pytest.mark.parametrize("code, method", [(303, "GET"), (302, "GET"), (307, "POST"), (308, "POST")])
def test_redirect_method_rules(http_url: str, code: int, method: str) -> None:
    spec = CheckSpec(
        f"{http_url}/redirect-to?code={code}&to=/echo",
        method="POST",
        body="payload",
        json_path="$.method",
        expected_json_value=method,
    )
    assert run_check(spec).passed


# Issue: a cross-origin redirect used to keep every header but Authorization and
# Cookie, so an API key under any other name went to whoever the target pointed at.
SECRET_HEADERS = {
    "X-Api-Key": "key-for-the-monitored-service",
    "Authorization": "Bearer secret",
    "Cookie": "session=secret",
    "X-Custom": "also-not-for-strangers",
}


@pytest.fixture
def other_origin() -> Iterator[CountingServer]:
    """A second server on its own port: another origin that records what it receives."""
    server = CountingServer()
    yield server
    server.stop()


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_cross_origin_redirect_carries_none_of_the_monitor_headers(
    http_url: str, other_origin: CountingServer, code: int
) -> None:
    to = other_origin.url("ok", "landing")
    spec = CheckSpec(f"{http_url}/redirect-to?code={code}&to={to}", headers=SECRET_HEADERS)
    assert run_check(spec).passed
    received = {
        name.lower(): value for name, value in other_origin.received_headers["landing"].items()
    }
    assert other_origin.hits["landing"] == 1
    assert not {name.lower() for name in SECRET_HEADERS} & set(received)
    assert received["user-agent"] == "uptime/0.1.0"  # the monitor's own, not the user's


def test_headers_stay_dropped_when_the_chain_comes_back(http_url: str) -> None:
    # 127.0.0.1 -> localhost -> 127.0.0.1: the other origin chose where the
    # chain goes next, so the headers do not come back with it.
    port = http_url.rsplit(":", 1)[1]
    back = quote(f"{http_url}/echo", safe="")
    via = quote(f"http://localhost:{port}/redirect-to?to={back}", safe="")
    spec = CheckSpec(
        f"{http_url}/redirect-to?to={via}",
        headers={"X-Api-Key": "k3y"},
        expected_content='"method": "GET"',
        excluded_content="k3y",
    )
    result = run_check(spec)
    assert result.passed, result.error


def test_a_same_origin_redirect_keeps_the_monitor_headers(http_url: str) -> None:
    spec = CheckSpec(
        f"{http_url}/redirect-to?to=/echo",
        headers=SECRET_HEADERS,
        json_path="$.headers.X-Api-Key",
        expected_json_value="key-for-the-monitored-service",
    )
    assert run_check(spec).passed


def test_another_host_name_of_the_same_server_is_another_origin(http_url: str) -> None:
    port = http_url.rsplit(":", 1)[1]
    spec = CheckSpec(
        f"{http_url}/redirect-to?to=http://localhost:{port}/echo",
        headers={"Authorization": "Bearer secret", "X-Api-Key": "k3y"},
        excluded_content="k3y",
    )
    assert run_check(spec).passed


def test_redirect_to_another_scheme_is_refused(http_url: str) -> None:
    # Not "unsupported URL scheme: file": the Location header is the target's text.
    result = run_check(CheckSpec(f"{http_url}/redirect-to?to=file:///etc/passwd"))
    assert result.error == "redirect to an unsupported URL"


# --- timeouts, connection errors, body cap ---------------------------------


def test_timeout_when_the_server_never_answers(hanging_port: int) -> None:
    result = run_check(CheckSpec(f"http://127.0.0.1:{hanging_port}/", timeout=1))
    assert result.error == "timeout after 1s"
    assert result.status_code is None and result.response_time is None


def test_timeout_covers_a_body_that_trickles(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/trickle", timeout=1))
    assert result.error == "timeout after 1s"
    assert result.status_code == 200  # headers came, the body did not in time


def test_connection_refused(refused_port: int) -> None:
    result = run_check(CheckSpec(f"http://127.0.0.1:{refused_port}/", retry_count=1))
    assert result.error == "connection refused" and result.attempts == 2


def test_dns_failure(fake_dns: dict[str, list[str]]) -> None:
    result = run_check(CheckSpec("http://no-such-host.test/"))
    assert result.error == "DNS lookup failed: no-such-host.test"


def test_body_cap_is_not_a_failure(http_url: str) -> None:
    config = ProbeConfig(max_body_bytes=1024)
    assert run_check(CheckSpec(f"{http_url}/big", expected_content="aaaa"), config).passed
    result = run_check(CheckSpec(f"{http_url}/big", expected_content="MARKER"), config)
    assert result.error == 'expected content "MARKER" not found'
    assert run_check(CheckSpec(f"{http_url}/big", expected_content="MARKER")).passed


def test_long_content_is_shortened_in_the_error(http_url: str) -> None:
    result = run_check(CheckSpec(f"{http_url}/ok", expected_content="z" * 1000))
    assert result.error is not None and len(result.error) < 150


# --- TLS -------------------------------------------------------------------


def test_https_with_private_ca(tls: TLSServers) -> None:
    result = run_check(CheckSpec(f"{tls.valid}/ok"), ProbeConfig(ca_bundle=tls.ca_file))
    assert result.passed, result.error
    assert result.cert_expires_at is not None
    assert result.cert_expires_at.tzinfo is not None
    assert result.cert_expires_at > dt.datetime.now(dt.UTC) + dt.timedelta(days=365)


def test_https_unknown_ca_fails_verification(tls: TLSServers) -> None:
    result = run_check(CheckSpec(f"{tls.valid}/ok"))
    assert result.error is not None
    assert result.error.startswith("TLS certificate verify failed: ")
    assert run_check(CheckSpec(f"{tls.valid}/ok", verify_ssl=False)).passed


def test_ssl_cert_file_is_honoured(tls: TLSServers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", tls.ca_file)
    assert run_check(CheckSpec(f"{tls.valid}/ok")).passed


def test_expiring_cert_date_is_read(tls: TLSServers) -> None:
    result = run_check(CheckSpec(f"{tls.expiring}/ok"), ProbeConfig(ca_bundle=tls.ca_file))
    assert result.passed
    assert result.cert_expires_at == tls.expiring_at


def test_cert_is_read_from_a_response_without_body(tls: TLSServers) -> None:
    config = ProbeConfig(ca_bundle=tls.ca_file)
    result = run_check(CheckSpec(f"{tls.expiring}/ok", method="HEAD"), config)
    assert result.cert_expires_at == tls.expiring_at
    result = run_check(CheckSpec(f"{tls.expiring}/status/204"), config)
    assert result.cert_expires_at == tls.expiring_at


def test_a_renewed_certificate_is_seen_by_the_next_check(
    server: ServerThread, tmp_path: Path
) -> None:
    # Certificates are parsed once per distinct DER (net/certs.peer_cert):
    # the same Prober must still report the new one the moment it is served.
    ca = trustme.CA()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    old_at, new_at = now + dt.timedelta(days=5), now + dt.timedelta(days=90)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", not_after=old_at).configure_cert(context)
    spec = CheckSpec(f"https://127.0.0.1:{server.listen(context)}/ok")

    async def go() -> list[RunResult]:
        async with Prober(ProbeConfig(ca_bundle=str(ca_file))) as prober:
            seen = [await prober.run(spec), await prober.run(spec)]
            ca.issue_cert("127.0.0.1", not_after=new_at).configure_cert(context)  # renewed
            return [*seen, await prober.run(spec), await prober.run(spec)]

    results = asyncio.run(go())
    assert all(r.passed for r in results), [r.error for r in results]
    assert [r.cert_expires_at for r in results] == [old_at, old_at, new_at, new_at]
    serials = [r.cert_serial for r in results]
    assert serials[0] == serials[1] and serials[2] == serials[3] and serials[0] != serials[2]


def test_peer_cert_is_read_by_the_certificate_bytes() -> None:
    ca = trustme.CA()
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    ders = [
        x509.load_pem_x509_certificate(
            ca.issue_cert("a.example", not_after=now + dt.timedelta(days=days))
            .cert_chain_pems[0]
            .bytes()
        ).public_bytes(serialization.Encoding.DER)
        for days in (3, 30)
    ]
    first, second = peer_cert(ders[0]), peer_cert(ders[1])
    assert first is not None and second is not None
    assert (first.not_after, second.not_after) == (
        now + dt.timedelta(days=3),
        now + dt.timedelta(days=30),
    )
    assert first.serial != second.serial
    assert peer_cert(bytes(bytearray(ders[0]))) == first  # equal bytes, another object
    assert peer_cert(None) is None and peer_cert(b"not a certificate") is None


def test_cert_is_kept_across_a_redirect_to_http(tls: TLSServers, http_url: str) -> None:
    spec = CheckSpec(f"{tls.expiring}/redirect-to?to={http_url}/ok")
    result = run_check(spec, ProbeConfig(ca_bundle=tls.ca_file))
    assert result.passed and result.cert_expires_at == tls.expiring_at


def test_expired_cert(tls: TLSServers) -> None:
    config = ProbeConfig(ca_bundle=tls.ca_file)
    result = run_check(CheckSpec(f"{tls.expired}/ok"), config)
    assert result.error == "TLS certificate verify failed: certificate has expired"
    lenient = run_check(CheckSpec(f"{tls.expired}/ok", verify_ssl=False), config)
    assert lenient.passed
    assert lenient.cert_expires_at is not None
    assert lenient.cert_expires_at < dt.datetime.now(dt.UTC)  # read even without verifying


def test_wrong_host_cert(tls: TLSServers) -> None:
    config = ProbeConfig(ca_bundle=tls.ca_file)
    result = run_check(CheckSpec(f"{tls.wrong_host}/ok"), config)
    assert result.error == (
        "TLS certificate verify failed: IP address mismatch, "
        "certificate is not valid for '127.0.0.1'"
    )
    by_name = run_check(CheckSpec(tls.wrong_host.replace("127.0.0.1", "localhost") + "/ok"), config)
    assert by_name.error is not None and "Hostname mismatch" in by_name.error
    assert run_check(CheckSpec(f"{tls.wrong_host}/ok", verify_ssl=False), config).passed


def test_tls_contexts_are_built_once(tls: TLSServers) -> None:
    first, second = (
        Prober(ProbeConfig(ca_bundle=tls.ca_file)),
        Prober(ProbeConfig(ca_bundle=tls.ca_file)),
    )
    assert first._verifying is second._verifying
    assert first._lenient is second._lenient
