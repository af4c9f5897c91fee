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
        path_info: str = environ.get("PATH_INFO", "")
        end = path_info.find("/", 1)
        path = self.paths.get(path_info[1:end] if end > 0 else path_info[1:])
        if path is not None:
            answer = path.answer(environ)
            if answer is not None:
                status, headers, body = answer
                start_response(status, headers)
                return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else body]
        return self.app(environ, start_response)
