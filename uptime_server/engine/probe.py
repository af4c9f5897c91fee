"""One check run: the retry loop, and the http/https attempt with aiohttp. No DB access.

Each attempt goes to the attempt function of the monitor's type
(``probes.registry.ATTEMPTS``); http and https are ``Prober.http_attempt``.

The rules of a run: docs/api.md#what-one-check-does.

A `Prober` is built once per process: it owns the two TLS contexts, one
`ClientSession` whose connector goes through the SSRF guard, and the threads
that evaluate JSONPath rules off the loop (`json_path.JsonPathRunner`). Every
exception of a check ends here as a short human error string, free of control
characters; callers never see a traceback.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace

import aiohttp
from yarl import URL

from uptime_server.checks.json_path import TIME_LIMIT, JsonPathRunner
from uptime_server.checks.rules import ProbeFailure, evaluate, printable
from uptime_server.checks.types import RETRY_DELAY_CAP, CheckSpec, RunResult
from uptime_server.engine.probes.registry import ATTEMPTS
from uptime_server.net.certs import PeerCert, peer_cert
from uptime_server.net.errors import describe_error
from uptime_server.net.guard import (
    TARGET_NOT_ALLOWED,
    GuardedResolver,
    GuardedSocketFactory,
    TargetNotAllowed,
    check_url,
)

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# aiohttp >= 3.12 lets us check the address at connect(); older versions rely
# on the pre-flight and the resolver alone.
_HAS_SOCKET_FACTORY = "socket_factory" in inspect.signature(aiohttp.TCPConnector).parameters
# Before CPython gh-118960 a closed TLS transport could linger until the peer
# answered close_notify; aiohttp then aborts them for us (and warns if asked
# on a fixed Python).
_NEEDS_TLS_CLEANUP = sys.version_info < (3, 12, 8) or (3, 13, 0) <= sys.version_info < (3, 13, 1)

_NO_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=None, sock_read=None, sock_connect=None)

Sleep = Callable[[float], Awaitable[object]]


@dataclass(frozen=True)
class ProbeConfig:
    """The process-wide probe settings every Prober of the process shares."""

    block_private: bool = False
    max_body_bytes: int = 1048576
    ca_bundle: str | None = None
    user_agent: str = "uptime/0.1.0"
    max_redirects: int = 10
    json_path_time_limit: float = TIME_LIMIT  # seconds; see json_path
    # The probe loops' event loop: "uvloop" (libuv) or "asyncio" (the
    # standard library's); see probe_loop.new_event_loop.
    event_loop: str = "uvloop"


@dataclass
class _Hops:
    """What the attempt saw so far, kept when a later hop fails."""

    status: int | None = None  # set once a response arrived
    cert: PeerCert | None = None

    def saw_cert(self, cert: PeerCert | None) -> None:
        # The earliest expiry along the redirect chain: any of them breaks the check.
        if cert is not None and (self.cert is None or cert.not_after < self.cert.not_after):
            self.cert = cert


class _CertCapturingResponse(aiohttp.ClientResponse):
    """Reads the peer certificate while the connection is still attached.

    A response without a body releases its connection inside `start()`, so
    the certificate cannot be fetched from the response afterwards.
    """

    peer_cert_der: bytes | None = None

    async def start(self, connection: aiohttp.connector.Connection) -> aiohttp.ClientResponse:
        transport = connection.transport
        ssl_object = transport.get_extra_info("ssl_object") if transport else None
        if ssl_object is not None:
            # binary_form works with CERT_NONE too, unlike the dict form.
            self.peer_cert_der = ssl_object.getpeercert(binary_form=True)
        return await super().start(connection)

    def peer_cert(self) -> PeerCert | None:
        return peer_cert(self.peer_cert_der)


@functools.lru_cache(maxsize=8)
def _ssl_contexts(
    ca_bundle: str | None, cert_file: str | None, cert_dir: str | None
) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(verifying, non-verifying), built once per process per trust setting.

    Loading the trust store into a verifying context costs more CPU than a
    check (bench/README.md#figures-moved-from-the-code-issue-30). The
    SSL_CERT_* values are part of the key only so a changed environment is seen.
    """
    verifying = ssl.create_default_context()  # system store, honours SSL_CERT_FILE/DIR
    if ca_bundle:
        verifying.load_verify_locations(cafile=ca_bundle)
    lenient = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    lenient.check_hostname = False
    lenient.verify_mode = ssl.CERT_NONE
    return verifying, lenient


class Prober:
    """Runs checks; one per process (or per event loop), shared by all monitors.

    Concurrency is not bounded here (the connector has no limit, so time spent
    queueing never counts as response time); the caller bounds it.
    """

    def __init__(
        self, config: ProbeConfig | None = None, *, json_paths: JsonPathRunner | None = None
    ) -> None:
        self.config = config or ProbeConfig()
        self._verifying, self._lenient = _ssl_contexts(
            self.config.ca_bundle,
            os.environ.get("SSL_CERT_FILE"),
            os.environ.get("SSL_CERT_DIR"),
        )
        # One session per private-target policy: the guard is the connector's.
        self._sessions: dict[bool, aiohttp.ClientSession] = {}
        self._owns_json_paths = json_paths is None
        self._json_paths = json_paths or JsonPathRunner(time_limit=self.config.json_path_time_limit)

    async def __aenter__(self) -> Prober:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            await session.close()
        if self._owns_json_paths:
            self._json_paths.close()

    async def run(self, spec: CheckSpec, *, sleep: Sleep = asyncio.sleep) -> RunResult:
        """Up to 1 + retry_count attempts, `min(check_interval, 10)` s apart."""
        results: list[RunResult] = []
        for number in range(1 + max(spec.retry_count, 0)):
            if number:
                await sleep(min(spec.check_interval, RETRY_DELAY_CAP))
            results.append(await self.attempt(spec))
            if results[-1].passed:
                break
        return _summarise(results)

    def blocks_private(self, spec: CheckSpec) -> bool:
        """Whether *spec*'s run refuses loopback and private targets (the
        process's setting, or the check's own: a probe agent's claim)."""
        return self.config.block_private or spec.block_private

    def ssl_context(self, verify: bool) -> ssl.SSLContext:
        """The process's verifying (CA bundle honoured) or non-verifying client context."""
        return self._verifying if verify else self._lenient

    async def attempt(self, spec: CheckSpec) -> RunResult:
        """One attempt (a run of one) by the monitor type's probe, never raising."""
        attempt = ATTEMPTS.get(spec.type)
        if attempt is None:
            return RunResult(False, None, None, printable(f"{spec.type} monitors are not checked"))
        return await attempt(self, spec)

    async def http_attempt(self, spec: CheckSpec) -> RunResult:
        """One http/https attempt, never raising (except cancellation)."""
        hops = _Hops()
        started = time.perf_counter()
        try:
            async with asyncio.timeout(spec.timeout):
                status, body, charset = await self._fetch(spec, hops)
        except Exception as exc:  # the module edge: every failure becomes a string
            error = describe_error(exc, spec.timeout, after_response=hops.status is not None)
            return _result(None, hops.status, error, hops.cert)
        elapsed = round((time.perf_counter() - started) * 1000)
        error = evaluate(spec, status, body, charset)
        if error is None and spec.json_path:
            error = await self._json_paths.check(spec.json_path, spec.expected_json_value, body)
        return _result(elapsed, status, error, hops.cert)

    def _get_session(self, block: bool) -> aiohttp.ClientSession:
        # Created lazily: a ClientSession belongs to the loop it is created in.
        session = self._sessions.get(block)
        if session is None:
            extra = {"socket_factory": GuardedSocketFactory(block_private=block)}
            connector = aiohttp.TCPConnector(
                resolver=GuardedResolver(block_private=block),
                # A fresh connection per check: a monitor should see that new
                # connections (and TLS handshakes) work, not reuse a warm one.
                force_close=True,
                limit=0,
                # Every check resolves anew, like a real client would.
                use_dns_cache=False,
                enable_cleanup_closed=_NEEDS_TLS_CLEANUP,
                **(extra if _HAS_SOCKET_FACTORY else {}),
            )
            session = self._sessions[block] = aiohttp.ClientSession(
                connector=connector,
                headers={"User-Agent": self.config.user_agent},  # a monitor's own one wins
                # Shared by all monitors of all users: no cookies may carry over.
                cookie_jar=aiohttp.DummyCookieJar(),
                response_class=_CertCapturingResponse,
                trust_env=False,  # a proxy would make the resolver check the wrong host
                # No timers of aiohttp's own: `attempt` puts one deadline around
                # the whole attempt (every hop, connect and body), which is the
                # check's total timeout; a second timer per request only costs.
                timeout=_NO_TIMEOUT,
            )
        return session

    async def _fetch(self, spec: CheckSpec, hops: _Hops) -> tuple[int, bytes, str | None]:
        """Follows redirects by hand so every hop passes the pre-flight check."""
        block_private = self.blocks_private(spec)
        session = self._get_session(block_private)
        url = _checked_url(spec.url, block_private)
        method = spec.method.upper()
        data = spec.body.encode() if spec.body is not None else None
        headers: Mapping[str, str] | None = spec.headers or None
        ssl_context = self.ssl_context(spec.verify_ssl)
        for _hop in range(self.config.max_redirects + 1):
            async with session.request(
                method, url, headers=headers, data=data, allow_redirects=False, ssl=ssl_context
            ) as resp:
                hops.status = resp.status
                if resp.peer_cert_der is not None:
                    hops.saw_cert(resp.peer_cert())
                location = resp.headers.get("Location")
                if not (spec.follow_redirects and resp.status in _REDIRECT_STATUSES and location):
                    body = await _read_capped(resp, self.config.max_body_bytes)
                    return resp.status, body, resp.charset
            next_url = _redirect_target(url, location, block_private=block_private)
            method, data = _redirect_method(resp.status, method, data)
            if next_url.origin() != url.origin():
                # Any header the user set may be a credential (X-Api-Key, a
                # token under any name) meant for the monitored origin only;
                # a third party the redirect points at gets none of them, and
                # they stay dropped for the rest of the chain.
                headers = None
            url = next_url
        raise ProbeFailure("too many redirects")


# Sized above the monitors one process checks: an LRU cycled by more keys
# than it holds never hits.
@functools.lru_cache(maxsize=16384)
def _checked_url(url: str, block_private: bool) -> URL:
    """The monitor's URL parsed and through the pre-flight check (a pure function of it).

    Cached: parsing and checking the same few thousand URLs on every run is
    pure waste. A refused URL raises and is not cached. The resolver and the
    socket factory still check every connection's real address.
    """
    try:
        parsed = URL(url)
    except (ValueError, TypeError) as exc:
        raise ProbeFailure("invalid URL") from exc
    return check_url(parsed, block_private=block_private)


def _redirect_target(current: URL, location: str, *, block_private: bool) -> URL:
    try:
        target = current.join(URL(location))
    except (ValueError, TypeError) as exc:
        raise ProbeFailure("invalid redirect location") from exc
    try:
        return check_url(target, block_private=block_private)
    except TargetNotAllowed as exc:
        if str(exc) == TARGET_NOT_ALLOWED:
            raise
        # Not "unsupported URL scheme: <scheme>": the Location is the target's text.
        raise ProbeFailure("redirect to an unsupported URL") from exc


def _redirect_method(status: int, method: str, data: bytes | None) -> tuple[str, bytes | None]:
    """What browsers do: 303 (and 301/302 after POST) become a GET without body."""
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        return "GET", None
    return method, data


async def _read_capped(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """At most `limit` bytes of the body; the rest is never read (not a failure)."""
    chunks: list[bytes] = []
    size = 0
    content = resp.content
    while size < limit:
        chunk = await content.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if content.at_eof():  # the whole body is in: no read just to learn that
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _result(
    elapsed: int | None, status: int | None, error: str | None, cert: PeerCert | None
) -> RunResult:
    """One http attempt's result (``RunResult.with_cert`` without a copy)."""
    # The one place a run's error is made: what is stored, mailed and shown
    # carries no control characters.
    return RunResult(
        error is None,
        elapsed,
        status,
        printable(error),
        cert.not_after if cert is not None else None,
        cert_serial=cert.serial if cert is not None else None,
    )


def _summarise(results: list[RunResult]) -> RunResult:
    """The run: its last attempt, with the count and the last certificate seen."""
    last = results[-1]
    if len(results) == 1 and last.attempts == 1 and not last.retried:
        return last  # a run of one attempt is that attempt (no copy per check)
    seen = next((r for r in reversed(results) if r.cert_expires_at), last)
    return replace(
        last,
        attempts=len(results),
        cert_expires_at=seen.cert_expires_at,
        cert_serial=seen.cert_serial,
        retried=last.passed and len(results) > 1,
    )


def run_check_sync(
    spec: CheckSpec, config: ProbeConfig | None = None, *, sleep: Sleep = asyncio.sleep
) -> RunResult:
    """One check run from synchronous code (a worker thread without a loop)."""

    async def _run() -> RunResult:
        async with Prober(config) as prober:
            return await prober.run(spec, sleep=sleep)

    return asyncio.run(_run())
