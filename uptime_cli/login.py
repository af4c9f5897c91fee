"""The loopback sign-in (RFC 8252), as docs/api.md#cli-sign-in describes.

1. Listen on 127.0.0.1, port chosen by the OS.
2. Make a PKCE verifier and its S256 challenge; the verifier never leaves
   this process until the exchange, so a ticket seen by anyone else (browser
   history, another local process) is useless to them.
3. Send the browser to ``/auth/<provider>/login?cli_redirect=…&cli_challenge=…``.
4. Accept exactly one callback, ``/callback?ticket=…``, answer it with a page
   saying the tab can be closed, and stop listening.
5. ``POST /auth/cli/exchange {ticket, verifier}`` → the session.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import secrets
import sys
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from uptime_cli.client import ApiClient

CALLBACK_PATH = "/callback"
DEFAULT_TIMEOUT = 300.0


class LoginTimeout(Exception):
    """No callback arrived in time."""


class LoginDenied(Exception):
    """The callback carried an error instead of a ticket."""


def pkce_pair() -> tuple[str, str]:
    """A verifier (43..128 unreserved characters) and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return verifier, challenge


def has_display() -> bool:
    """Whether a browser can be opened here (Linux needs X11 or Wayland)."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


@dataclass
class Callback:
    query: dict[str, str]

    @property
    def ticket(self) -> str | None:
        return self.query.get("ticket") or None


class CallbackServer(HTTPServer):
    """Serves 127.0.0.1:<port> until one request reaches CALLBACK_PATH."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _CallbackHandler)
        self.callback: Callback | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{CALLBACK_PATH}"

    def wait(self, timeout: float) -> Callback:
        deadline = time.monotonic() + timeout
        while self.callback is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LoginTimeout(f"no sign-in completed within {timeout:g}s")
            self.timeout = min(remaining, 0.5)  # wake up to notice the deadline
            self.handle_request()
        return self.callback


class _CallbackHandler(BaseHTTPRequestHandler):
    server: CallbackServer
    # Browsers open speculative connections that never send a request: don't
    # let one of them block the only thread.
    timeout = 5

    def do_GET(self) -> None:  # http.server's naming
        parts = urlsplit(self.path)
        if parts.path != CALLBACK_PATH or self.server.callback is not None:
            self._page(404, "Not found", "This address only takes the sign-in callback.")
            return
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.server.callback = Callback(query)
        if query.get("ticket"):
            self._page(200, "Signed in", "You can close this tab and return to the terminal.")
        else:
            reason = query.get("error_description") or query.get("error") or "no ticket received"
            self._page(400, "Sign-in failed", f"{reason}. Return to the terminal for details.")

    def _page(self, status: int, title: str, text: str) -> None:
        title, text = html.escape(title), html.escape(text)
        body = (
            f"<!doctype html><meta charset=utf-8><title>uptime: {title}</title>"
            f"<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{text}</p>"
        )
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        # The request line carries the ticket: keep it out of the terminal.
        return


def loopback_login(
    client: ApiClient,
    provider: str,
    *,
    open_browser: bool,
    timeout: float,
    announce: Callable[[str, bool], None],
) -> dict[str, Any]:
    """Run the whole flow; return the exchange's ``data`` (session, expires_at, user).

    ``announce(url, opened)`` tells the user where to go: ``opened`` says
    whether a browser was launched.
    """
    verifier, challenge = pkce_pair()
    with CallbackServer() as server:
        url = client.login_url(provider, cli_redirect=server.redirect_uri, cli_challenge=challenge)
        opened = open_browser and _open(url)
        announce(url, opened)
        callback = server.wait(timeout)
    if not callback.ticket:
        reason = callback.query.get("error_description") or callback.query.get("error")
        raise LoginDenied(reason or "the callback carried no ticket")
    response = client.cli_exchange(callback.ticket, verifier)
    return response.get("data") or {}


def _open(url: str) -> bool:
    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False
