"""The fast paths' one protocol and the dispatcher that runs them before Flask."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from uptime_server.wsgi.types import Answer, Environ, StartResponse, WsgiApp


class FastPath(Protocol):
    # The first path segments whose requests this path may answer ("ping" for /ping/...).
    segments: tuple[str, ...]

    def answer(self, environ: Environ) -> Answer | None:
        """The whole answer to this request, or None: Flask answers it."""
        ...


class FastPaths:
    """The app's WSGI entry: the fast path of the request's first segment, else *app* (Flask)."""

    def __init__(self, app: WsgiApp, paths: Sequence[FastPath]) -> None:
        self.app = app
        self.paths = {segment: path for path in paths for segment in path.segments}

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        segments = environ.get("PATH_INFO", "").split("/", 2)
        path = self.paths.get(segments[1]) if len(segments) > 1 else None
        if path is not None:
            answer = path.answer(environ)
            if answer is not None:
                # A copy: the server may add to the list, and an answer can be sent again.
                start_response(answer.status, list(answer.headers))
                return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else answer.body]
        return self.app(environ, start_response)
