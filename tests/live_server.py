"""A WSGI app served by waitress on 127.0.0.1 in a thread, for tests and benchmarks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from waitress import wasyncore
from waitress.server import create_server


@contextmanager
def serving(app: Any, *, ident: str = "uptime-test", threads: int = 4) -> Iterator[str]:
    """Serve *app* on a port the OS picks; yields the base URL, stops the server after."""
    server = create_server(app, host="127.0.0.1", port=0, threads=threads, ident=ident)
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
