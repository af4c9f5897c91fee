"""The API served by waitress on 127.0.0.1 in a thread, for tests and benchmarks.

The server is built as the daemon builds it (``uptime_server.wsgi.server``):
the same body limit, JSON error responses and, unless a test asks for fewer,
the app's ``UPTIME_HTTP_THREADS`` worker threads.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from waitress import wasyncore

from uptime_server.wsgi.context import app_state
from uptime_server.wsgi.server import create_api_server


@contextmanager
def serving(
    app: Any,
    *,
    ident: str = "uptime-test",
    threads: int | None = None,
    sock: socket.socket | None = None,
) -> Iterator[str]:
    """Serve *app* (made by ``create_app``) on a port the OS picks, or on *sock*
    (bound beforehand, so a test can put the port in the app's settings);
    yields the base URL and stops the server after."""
    where: dict[str, Any] = {"sockets": [sock]} if sock else {"host": "127.0.0.1", "port": 0}
    settings = app_state(app).settings
    server = create_api_server(app, settings, threads=threads, ident=ident, **where)
    thread = threading.Thread(target=server.run, name="live-api", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        # Let the worker threads finish first: they poke the loop through its
        # trigger pipe when a response is done, and must not do so once it is closed.
        server.task_dispatcher.shutdown()
        # Close the sockets from inside waitress's loop thread (closing them from
        # here races its select()); an empty socket map ends the loop.
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(5)
