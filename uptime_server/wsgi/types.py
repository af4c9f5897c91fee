"""The WSGI callables, the answer a fast path gives, and what every answer shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Environ = dict[str, Any]
Headers = list[tuple[str, str]]
StartResponse = Callable[..., Any]
WsgiApp = Callable[[Environ, StartResponse], Iterable[bytes]]

MAX_REQUEST_BODY = 1024 * 1024  # request bodies: docs/api.md#request-size
# Sent with every response, the app's, the fast paths' and waitress's own.
RESPONSE_HEADERS = {"X-Content-Type-Options": "nosniff"}


# A whole response: the status line, the headers in the order sent (a fresh
# list: the server may add to it), and the body (the GET's: the dispatcher
# sends none for a HEAD). A plain tuple: a NamedTuple's constructor costs
# more than the rest of a cached badge's dispatch (bench/README.md#fast-paths-issue-30).
Answer = tuple[str, Headers, bytes]
