"""The SSRF guard for a library that opens its connections itself (Apprise).

The probes and the webhook channel hand the guard (``guard.py``) to aiohttp
as its resolver and socket factory. Apprise has no such seam: its plugins
call ``requests.post()`` (each call a fresh Session), ``smtplib``, or raw
sockets. A requests transport adapter would cover the first kind only, and
could not even be mounted without patching requests, since the Session is
made inside the call. So the guard stands where every plugin passes, the
standard library's sockets, and acts only in a thread that has entered
``guarded()``:

- ``socket.getaddrinfo``: a name is resolved once per scope and every address
  of the answer judged; one refused address refuses the answer, as
  ``GuardedResolver`` does. The answer is kept for the rest of the scope: a
  second request to the name (a retry, a plugin's second call) gets the
  addresses judged the first time, so nothing is resolved again for DNS
  rebinding to answer. An IP literal, in any spelling the OS accepts
  (``2852039166``, ``[::ffff:a9fe:a9fe]``), is judged as the address it is.
- ``socket.socket.connect``, ``connect_ex`` and ``sendto``: the address
  really dialled is judged once more, the last wall (as
  ``GuardedSocketFactory``). A host name handed to them, which the C library
  would resolve by itself, is resolved through the scope and replaced by the
  judged address. A socket that is not IPv4 or IPv6 (a Unix socket) is
  refused.
- ``requests.Session.request``: nothing from the environment. A proxy from
  ``HTTPS_PROXY`` would resolve the name itself, behind the guard's back, and
  ``.netrc`` would hand its passwords to whatever host a user typed.

The hooks are installed once, when this module is imported, and each looks
up the thread's scope before anything else: outside a scope it calls the
original at once. A scope belongs to one thread, so channels sent from
several threads at a time never see each other's; the probes' event loop
(uvloop, libuv's own resolver and sockets) never passes here at all.

A scope notes what it saw (hosts refused or not resolved, connections that
failed, HTTP statuses) so its caller can word an error without quoting what
the peer sent.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import requests

from uptime_server.net import guard

# The originals, taken before the hooks go in. ``system_getaddrinfo`` is the
# resolver a scope asks for names: tests replace it to answer without DNS.
_getaddrinfo_original = socket.getaddrinfo
system_getaddrinfo = _getaddrinfo_original
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_sendto = socket.socket.sendto
_session_request = requests.Session.request

_INET = (socket.AF_INET, socket.AF_INET6)
_local = threading.local()


@dataclass
class Scope:
    """One guarded call: its verdicts, its pinned answers, and what it saw."""

    block_private: bool
    # Name (lower case, no trailing dot) -> the addresses judged for it.
    answers: dict[str, list[str]] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)  # hosts, as they were asked for
    unresolved: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    # Connections refused, reset or timed out, and requests left unanswered.
    unanswered: int = 0
    statuses: list[int] = field(default_factory=list)

    def resolve(
        self, host: str | bytes, port: Any, family: int = 0, type: int = 0, proto: int = 0
    ) -> list[Any]:
        """getaddrinfo's answer for *host*, judged; the first answer of a name is kept."""
        name = _text(host)
        literal = guard.parse_ip_host(name)
        if literal is not None:
            addresses = [str(literal)]
        else:
            key = name.lower().removesuffix(".")
            pinned = self.answers.get(key)
            if pinned is None:
                pinned = self._lookup(name, port)
                self.answers[key] = pinned
            addresses = pinned
        if not addresses or not all(
            guard.address_allowed(a, block_private=self.block_private) for a in addresses
        ):
            self.refused.append(name)
            raise guard.RefusedAtConnect()
        self.allowed.append(name)
        infos = []
        for address in addresses:
            with contextlib.suppress(socket.gaierror):  # another family than asked for
                infos += _getaddrinfo_original(
                    address, port, family, type, proto, socket.AI_NUMERICHOST
                )
        if not infos:
            raise socket.gaierror(socket.EAI_NONAME, f"no address of the family asked for {name}")
        return infos

    def _lookup(self, name: str, port: Any) -> list[str]:
        _local.resolving = True
        try:
            answer = system_getaddrinfo(name, port, 0, socket.SOCK_STREAM)
        except socket.gaierror:
            self.unresolved.append(name)
            raise
        finally:
            _local.resolving = False
        return list(dict.fromkeys(info[4][0] for info in answer))

    def admit(self, sock: socket.socket, address: Any) -> Any:
        """The address to dial instead of *address*: judged, and numeric."""
        if sock.family not in _INET or not isinstance(address, tuple) or len(address) < 2:
            self.refused.append(str(sock.family))
            raise guard.RefusedAtConnect()
        host, port, *rest = address
        infos = self.resolve(host, port, sock.family, sock.type)
        return (infos[0][4][0], port, *rest)


def current() -> Scope | None:
    """The scope of this thread, if it is inside ``guarded()``."""
    return getattr(_local, "scope", None)


@contextlib.contextmanager
def guarded(*, block_private: bool) -> Iterator[Scope]:
    """Every connection this thread opens meanwhile goes to a judged address."""
    if current() is not None:
        raise RuntimeError("guarded() does not nest")
    scope = Scope(block_private=block_private)
    _local.scope = scope
    try:
        yield scope
    finally:
        _local.scope = None


def _text(host: str | bytes | None) -> str:
    if isinstance(host, bytes):
        return host.decode("idna")
    return host or ""


def _active() -> Scope | None:
    scope = getattr(_local, "scope", None)
    if scope is None or getattr(_local, "resolving", False):
        return None
    return scope


def _getaddrinfo(
    host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
) -> list[Any]:
    scope = _active()
    if scope is None:
        return _getaddrinfo_original(host, port, family, type, proto, flags)
    return scope.resolve(host, port, family, type, proto)


def _guarded_connect(sock: socket.socket, address: Any) -> None:
    scope = _active()
    if scope is None:
        return _connect(sock, address)
    target = scope.admit(sock, address)
    try:
        return _connect(sock, target)
    except BlockingIOError:  # a non-blocking connect under way
        raise
    except OSError:
        scope.unanswered += 1
        raise


def _guarded_connect_ex(sock: socket.socket, address: Any) -> int:
    scope = _active()
    if scope is None:
        return _connect_ex(sock, address)
    result = _connect_ex(sock, scope.admit(sock, address))
    if result not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
        scope.unanswered += 1
    return result


def _guarded_sendto(sock: socket.socket, data: Any, *args: Any) -> int:
    scope = _active()
    if scope is None or not args:
        return _sendto(sock, data, *args)
    *flags, address = args
    return _sendto(sock, data, *flags, scope.admit(sock, address))


def _guarded_request(session: requests.Session, method: str, url: str, *a: Any, **kw: Any) -> Any:
    scope = _active()
    if scope is None:
        return _session_request(session, method, url, *a, **kw)
    session.trust_env = False
    try:
        response = _session_request(session, method, url, *a, **kw)
    except requests.RequestException:
        scope.unanswered += 1
        raise
    scope.statuses.append(response.status_code)
    return response


socket.getaddrinfo = _getaddrinfo
socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.socket.sendto = _guarded_sendto  # type: ignore[method-assign]
requests.Session.request = _guarded_request  # type: ignore[method-assign]
