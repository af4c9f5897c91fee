"""Real servers on 127.0.0.1 for probe tests, and a net that keeps tests local.

The net (`connections`, autouse) patches the event loop's `sock_connect`, the
call every aiohttp connection goes through: a connection to anything but this
machine is refused and recorded, and the test fails, so a broken guard can
never send traffic out. The probe loops run on uvloop (``UPTIME_EVENT_LOOP``),
whose C code connects without asyncio's ``sock_connect``: there the net also
covers ``create_connection`` (the tcp probe) and ``create_datagram_endpoint``
(dns over UDP) by their remote address.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme
import uvloop
from aiohttp import web

from tests.dns_server import DnsServer
from uptime_server.checks.types import CheckSpec, RunResult
from uptime_server.engine.probe import ProbeConfig, Prober

# Addresses that never leave the machine (0.0.0.0 and :: connect locally).
_LOCAL = ("127.0.0.0/8", "::1/128", "0.0.0.0/32", "::/128")


def _is_local(host: str) -> bool:
    addr = ipaddress.ip_address(host.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        addr = addr.ipv4_mapped
    return any(addr in ipaddress.ip_network(net) for net in _LOCAL)


@pytest.fixture(autouse=True)
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every address the code under test dialled; non-local ones are refused."""
    dialled: list[tuple[str, int]] = []
    forbidden: list[tuple[str, int]] = []
    loop_class = asyncio.selector_events.BaseSelectorEventLoop
    real_connect = loop_class.sock_connect

    async def sock_connect(self, sock, address):  # type: ignore[no-untyped-def]
        target = (address[0], address[1])
        dialled.append(target)
        if not _is_local(address[0]):
            forbidden.append(target)
            raise PermissionError(f"test net: refused connection to {address[0]}")
        return await real_connect(self, sock, address)

    def check(address: Any) -> None:
        target = (address[0], address[1])
        dialled.append(target)
        if not _is_local(address[0]):
            forbidden.append(target)
            raise PermissionError(f"test net: refused connection to {address[0]}")

    uv_sock_connect = uvloop.Loop.sock_connect
    uv_create_connection = uvloop.Loop.create_connection
    uv_datagram_endpoint = uvloop.Loop.create_datagram_endpoint

    async def uv_connect(self, sock, address):  # type: ignore[no-untyped-def]
        check(address)
        return await uv_sock_connect(self, sock, address)

    async def uv_create(self, factory, host=None, port=None, **kwargs):  # type: ignore[no-untyped-def]
        if host is not None:
            check((host, port))
        return await uv_create_connection(self, factory, host, port, **kwargs)

    async def uv_datagram(self, factory, local_addr=None, remote_addr=None, **kwargs):  # type: ignore[no-untyped-def]
        if remote_addr is not None:
            check(remote_addr)
        return await uv_datagram_endpoint(self, factory, local_addr, remote_addr, **kwargs)

    monkeypatch.setattr(loop_class, "sock_connect", sock_connect)
    monkeypatch.setattr(uvloop.Loop, "sock_connect", uv_connect)
    monkeypatch.setattr(uvloop.Loop, "create_connection", uv_create)
    monkeypatch.setattr(uvloop.Loop, "create_datagram_endpoint", uv_datagram)
    yield dialled
    assert not forbidden, f"tried to connect off this machine: {forbidden}"


async def _no_sleep(seconds: float) -> None:
    pass


def run_check(spec: CheckSpec, config: ProbeConfig | None = None) -> RunResult:
    """One check run with a fresh Prober; retries do not wait."""

    async def go() -> RunResult:
        async with Prober(config) as prober:
            return await prober.run(spec, sleep=_no_sleep)

    return asyncio.run(go())


# --- the test application -------------------------------------------------

_flaky_seen: set[str] = set()


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="all ok")


async def _status(request: web.Request) -> web.Response:
    return web.Response(status=int(request.match_info["code"]), text="status page")


async def _json(request: web.Request) -> web.Response:
    doc = {"status": "up", "count": 42, "ratio": 0.5, "flag": True, "nothing": None}
    doc["nested"] = {"items": [{"name": "a"}, {"name": "b"}]}
    return web.json_response(doc)


async def _text(request: web.Request) -> web.Response:
    return web.Response(text="plain text, not JSON; café")


async def _latin1(request: web.Request) -> web.Response:
    """ "café" in ISO-8859-1: the é (0xE9) is no UTF-8, so only the declared charset reads it."""
    return web.Response(text="plain text; café", charset="iso-8859-1")


async def _echo(request: web.Request) -> web.Response:
    body = await request.text()
    return web.json_response(
        {"method": request.method, "headers": dict(request.headers), "body": body}
    )


async def _redirect_chain(request: web.Request) -> web.Response:
    left = int(request.match_info["n"])
    raise web.HTTPFound(f"/redirect/{left - 1}" if left > 0 else "/ok")


async def _redirect_to(request: web.Request) -> web.Response:
    code = int(request.query.get("code", "302"))
    return web.Response(status=code, headers={"Location": request.query["to"]})


async def _loop(request: web.Request) -> web.Response:
    raise web.HTTPFound("/loop")


async def _flaky(request: web.Request) -> web.Response:
    """503 on the first request for a key, 200 afterwards."""
    key = request.match_info["key"]
    if key not in _flaky_seen:
        _flaky_seen.add(key)
        return web.Response(status=503, text="try again")
    return web.Response(text="ok now")


async def _trickle(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    response.content_length = 100
    await response.prepare(request)
    for _ in range(100):
        await response.write(b"x")
        await asyncio.sleep(0.2)
    return response


async def _big(request: web.Request) -> web.Response:
    return web.Response(body=b"a" * 4096 + b"MARKER", content_type="text/plain")


async def _nested(request: web.Request) -> web.Response:
    """Arrays nested {depth} deep: `$..*..*..*` on it is cubic in the depth."""
    depth = int(request.match_info["depth"])
    return web.Response(text="[" * depth + "]" * depth, content_type="application/json")


async def _set_cookie(request: web.Request) -> web.Response:
    response = web.Response(text="cookie set")
    response.set_cookie("session", "secret")
    return response


def build_app() -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/ok", _ok)
    app.router.add_get("/status/{code}", _status)
    app.router.add_get("/json", _json)
    app.router.add_get("/text", _text)
    app.router.add_get("/latin1", _latin1)
    app.router.add_route("*", "/echo", _echo)
    app.router.add_get("/redirect/{n}", _redirect_chain)
    app.router.add_route("*", "/redirect-to", _redirect_to)
    app.router.add_get("/loop", _loop)
    app.router.add_get("/flaky/{key}", _flaky)
    app.router.add_get("/trickle", _trickle)
    app.router.add_get("/big", _big)
    app.router.add_get("/set-cookie", _set_cookie)
    app.router.add_get("/nested/{depth}", _nested)
    return app


class ServerThread:
    """An event loop in a thread serving the test app on several ports."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._runner = self._call(self._setup())

    def _call(self, coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    async def _setup(self) -> web.AppRunner:
        runner = web.AppRunner(build_app(), shutdown_timeout=0.1)
        await runner.setup()
        return runner

    def listen(self, ssl_context: ssl.SSLContext | None = None) -> int:
        async def start() -> int:
            site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=ssl_context)
            await site.start()
            return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

        return self._call(start())

    def stop(self) -> None:
        self._call(self._runner.cleanup())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()


@pytest.fixture(scope="session")
def server() -> Iterator[ServerThread]:
    thread = ServerThread()
    yield thread
    thread.stop()


@pytest.fixture(scope="session")
def http_url(server: ServerThread) -> str:
    return f"http://127.0.0.1:{server.listen()}"


@dataclass(frozen=True)
class TLSServers:
    ca_file: str
    valid: str
    expired: str
    expiring: str
    wrong_host: str
    expiring_at: dt.datetime


@pytest.fixture(scope="session")
def tls(server: ServerThread, tmp_path_factory: pytest.TempPathFactory) -> TLSServers:
    ca = trustme.CA()
    ca_file = Path(tmp_path_factory.mktemp("ca")) / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    expiring_at = now + dt.timedelta(days=10)
    certs = {
        "valid": ca.issue_cert("127.0.0.1", "localhost"),
        "expired": ca.issue_cert(
            "127.0.0.1",
            not_before=now - dt.timedelta(days=30),
            not_after=now - dt.timedelta(days=1),
        ),
        "expiring": ca.issue_cert("127.0.0.1", not_after=expiring_at),
        "wrong_host": ca.issue_cert("wrong.example"),
    }
    urls = {}
    for name, cert in certs.items():
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(context)
        urls[name] = f"https://127.0.0.1:{server.listen(context)}"
    return TLSServers(ca_file=str(ca_file), expiring_at=expiring_at, **urls)


@pytest.fixture(scope="session")
def dns_server() -> Iterator[DnsServer]:
    """A real DNS server on 127.0.0.1 (UDP and TCP) serving tests/dns_server.py's zone."""
    server = DnsServer(slow_delay=0.5)
    yield server
    server.stop()


@pytest.fixture
def hanging_port() -> Iterator[int]:
    """A port that completes the TCP handshake (kernel backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock.getsockname()[1]
    sock.close()


@pytest.fixture
def refused_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names ending in `.test` resolve from this dict (missing → NXDOMAIN), no DNS traffic."""
    table: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):  # type: ignore[no-untyped-def]
        if not isinstance(host, str) or not host.endswith(".test"):
            return real(host, port, family, type, proto, flags)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        infos = []
        for ip in table[host]:
            if ":" in ip:
                infos.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, port, 0, 0)))
            else:
                infos.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)))
        return infos

    # uvloop (the probe loops' event loop) resolves through libuv, not
    # socket.getaddrinfo: its lookups of these names get the same table.
    real_uv = uvloop.Loop.getaddrinfo

    async def uv_getaddrinfo(self, host, port, *, family=0, type=0, proto=0, flags=0):  # type: ignore[no-untyped-def]
        if isinstance(host, str) and host.endswith(".test"):
            return getaddrinfo(host, port, family, type, proto, flags)
        return await real_uv(self, host, port, family=family, type=type, proto=proto, flags=flags)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(uvloop.Loop, "getaddrinfo", uv_getaddrinfo)
    return table


async def _no_sleep(seconds: float) -> None:
    pass


@pytest.fixture
def scheduler(db, settings, clock):
    """A CheckScheduler on the manual clock whose retries never wait."""
    from uptime_server.engine.scheduler import CheckScheduler
    from uptime_server.engine.worker import InProcess

    here = InProcess(settings)
    made = CheckScheduler(settings, claims=here, records=here, clock=clock, sleep=_no_sleep)
    yield made
    made.close()


def step(clock, scheduler, seconds):
    """One scheduler turn at the clock's time, its checks settled, then time moves on."""
    scheduler.loop(clock.now())
    assert scheduler.settle(30)
    clock.advance(seconds)
