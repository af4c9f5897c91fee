"""The API's HTTP server: waitress, configured as the daemon runs it.

Waitress reads a whole request body, to memory or to a temporary file,
before it calls the app. So the body limit is waitress's own: a declared
``Content-Length`` over it is refused from the headers, before a byte of the
body is read, and a chunked body as soon as it passes the limit. The app
checks the same limit again for servers other than this one (the test
client). Waitress answers its own refusals (413, a malformed request) in
plain text; ``JsonErrorTask`` writes them with the API's one error writer
(``wsgi/errors.py``) instead.

Lingering close (RFC 9112 §9.6): a client refused mid-upload is usually
still sending. Were the socket closed with its data unread, the kernel would
answer with a reset, which may erase the 413 from the client's buffers
before it is read. So after a refusal ``JsonErrorChannel`` sends its answer,
ends its side of the connection, and reads and drops what the client still
sends, for ``LINGER_SECONDS`` at most, before it closes (as nginx does).

Shared port (``UPTIME_REUSE_PORT``): ``shared_port_sockets`` binds the
listening sockets with ``SO_REUSEPORT``, so several daemons on one machine
(say ``uptime server run`` and ``uptime server run --no-scheduler``) listen
on the same address and the kernel spreads new connections between them.
Each process has a GIL of its own: two API processes answer about twice the
requests a single one does on two cores (bench/README.md).
"""

from __future__ import annotations

import socket
import time
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer, create_server
from waitress.task import ErrorTask

from uptime_server.config import Settings
from uptime_server.wsgi.errors import error_body
from uptime_server.wsgi.types import MAX_REQUEST_BODY, RESPONSE_HEADERS

LINGER_SECONDS = 10.0

_WAITRESS_ERRORS = {
    413: ("PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB"),
    431: ("VALIDATION_ERROR", "Request headers are too large"),
    500: ("INTERNAL_ERROR", "Internal error"),
}


class JsonErrorTask(ErrorTask):
    """Waitress's error response, in ``{"error": {code, message, details}}`` form."""

    def execute(self) -> None:
        error = self.request.error
        code, message = _WAITRESS_ERRORS.get(
            error.code, ("VALIDATION_ERROR", f"Malformed HTTP request: {error.body}")
        )
        body = error_body(code, message)
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.response_headers.extend(RESPONSE_HEADERS.items())
        self.set_close_on_finish()
        self.channel.linger_on_close = True
        self.content_length = len(body)
        self.write(body)


class JsonErrorChannel(HTTPChannel):
    """Waitress's channel with JSON errors and a lingering close after them.

    Waitress asks every channel ``readable()`` and ``writable()`` on each
    turn of its loop, so an ordinary channel keeps waitress's own
    ``readable()`` (no extra frame per channel per turn) and answers
    ``writable()`` without calling waitress's; a channel that starts
    lingering becomes a ``LingeringChannel``, which answers them itself.
    """

    error_task_class = JsonErrorTask
    linger_on_close = False
    linger_until: float | None = None
    flushing = False  # a thread is in _flush_some, sending this channel's output

    def _flush_some(self, do_close: bool = True) -> bool:
        self.flushing = True
        try:
            return super()._flush_some(do_close)
        finally:
            self.flushing = False

    def writable(self) -> bool:
        """Waitress's answer, but not while a worker thread is sending.

        A worker sends its response itself (``write_soon``), and while its
        ``send()`` waits for the GIL the bytes still count in
        ``total_outbufs_len``. Waitress's loop thread then saw the channel
        writable, select() returned at once, the outbuf lock was the
        worker's, and the loop turned again: 19 turns (each asking all
        connections) per request with 32 clients, instead of 2. A worker that
        leaves bytes unsent pulls the trigger after its flush, so the loop
        sends the rest.
        """
        return not self.flushing and bool(
            self.total_outbufs_len or self.will_close or self.close_when_flushed
        )

    def handle_close(self) -> None:
        if self.linger_on_close and self.linger_until is None and self.connected:
            try:
                self.socket.shutdown(socket.SHUT_WR)  # the answer is out: FIN after it
            except OSError:
                pass
            else:
                self.linger_until = time.monotonic() + LINGER_SECONDS
                self.__class__ = LingeringChannel
                return
        super().handle_close()


class LingeringChannel(JsonErrorChannel):
    """A channel whose answer is out: it reads and drops what the client still sends."""

    def readable(self) -> bool:
        if self.linger_until is None:
            return super().readable()
        if time.monotonic() > self.linger_until:
            HTTPChannel.handle_close(self)  # out of the map: select() never sees the fd
            return False
        return True

    def writable(self) -> bool:
        return self.linger_until is None and super().writable()

    def handle_read(self) -> None:
        if self.linger_until is None:
            super().handle_read()
            return
        # recv() closes the channel itself on end of stream or a reset.
        self.recv(self.adj.recv_bytes)
        if self.linger_until is not None and time.monotonic() > self.linger_until:
            HTTPChannel.handle_close(self)


def shared_port_sockets(host: str, port: int) -> list[socket.socket]:
    """Bound, not yet listening, ``SO_REUSEPORT`` sockets for each address of *host*.

    Raises ``OSError`` as ``bind`` would (the port is held by a process that
    did not set the option, or by another user), and on a platform without
    ``SO_REUSEPORT``.
    """
    if not hasattr(socket, "SO_REUSEPORT"):
        raise OSError(0, "SO_REUSEPORT is not available on this platform")
    infos = socket.getaddrinfo(
        host, port, socket.AF_UNSPEC, socket.SOCK_STREAM, socket.IPPROTO_TCP, socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def create_api_server(
    app: Any,
    settings: Settings,
    *,
    socket_map: dict[int, Any] | None = None,
    threads: int | None = None,
    ident: str = "uptime",
    **where: Any,
) -> Any:
    """A waitress server for *app* (not started); *where* is host/port or sockets.

    *socket_map* is waitress's map of its sockets, for whoever must close them later.
    """
    sockets: dict[int, Any] = {} if socket_map is None else socket_map
    server = create_server(
        app,
        map=sockets,
        threads=threads or settings.http_threads,
        ident=ident,
        # Waitress refuses a body of this many bytes or more: MAX_REQUEST_BODY passes.
        max_request_body_size=MAX_REQUEST_BODY + 1,
        **where,
    )
    for dispatcher in list(sockets.values()):
        if isinstance(dispatcher, BaseWSGIServer):
            dispatcher.channel_class = JsonErrorChannel
    return server
