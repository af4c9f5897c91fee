"""The CLI side of the loopback sign-in (docs/api.md#cli-sign-in).

A small stand-in for the daemon's sign-in endpoints runs on 127.0.0.1: its
``/auth/<provider>/login`` redirects the "browser" straight to the CLI's
loopback URL with a one-time ticket (where the real daemon would first go
through the provider), and ``/auth/cli/exchange`` checks the S256 verifier
against the challenge it saw. No real browser: the tests follow the printed
URL with requests.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from tests.cli.conftest import Cli, base_env, closed_port, describe
from tests.cli.login_process import URL_LINE, read_login_url, start_uptime
from tests.stub_http import StubHandler
from uptime_cli import credentials

USER = {"id": 7, "email": "octo@example.com", "name": "Octo", "provider": "github"}


@dataclass
class StandIn:
    """The daemon's login + exchange endpoints, reduced to what the CLI sees."""

    server: ThreadingHTTPServer
    challenges: dict[str, str] = field(default_factory=dict)  # ticket → challenge
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    callback_error: str | None = None  # redirect with ?error= instead of a ticket

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


class _StandInHandler(StubHandler):
    server: Any

    def do_GET(self) -> None:
        stand_in: StandIn = self.server.stand_in
        parts = urlsplit(self.path)
        stand_in.requests.append(("GET", parts.path, dict(self.headers)))
        match = re.fullmatch(r"/api/v1/auth/(\w+)/login", parts.path)
        if match:
            self._login(stand_in, match.group(1), parse_qs(parts.query))
        elif parts.path == "/api/v1/auth/user":
            user = stand_in.sessions.get(self._cookie())
            if user is None:
                self._json(401, {"error": {"code": "UNAUTHORIZED", "message": "no", "details": {}}})
            else:
                self._json(200, {"data": user})
        else:
            self._json(404, {"error": {"code": "NOT_FOUND", "message": "no", "details": {}}})

    def _login(self, stand_in: StandIn, provider: str, query: dict[str, list[str]]) -> None:
        if provider not in ("github", "google"):
            details = {"provider": ["configured providers: github, google"]}
            body = {"error": {"code": "PROVIDER_NOT_FOUND", "message": "no", "details": details}}
            self._json(404, body)
            return
        redirect, challenge = (query.get(k, [""])[0] for k in ("cli_redirect", "cli_challenge"))
        if not (redirect and challenge):
            # Like the daemon: checked after the provider, before any state (the CLI's pre-flight).
            body = {"error": {"code": "VALIDATION_ERROR", "message": "no", "details": {}}}
            self._json(400, body)
            return
        assert urlsplit(redirect).hostname == "127.0.0.1"
        if stand_in.callback_error:
            location = f"{redirect}?{urlencode({'error': stand_in.callback_error})}"
        else:
            ticket = secrets.token_urlsafe(16)
            stand_in.challenges[ticket] = challenge
            location = f"{redirect}?{urlencode({'ticket': ticket})}"
        self.reply(302, b"", None, {"Location": location})

    def do_POST(self) -> None:
        stand_in: StandIn = self.server.stand_in
        stand_in.requests.append(("POST", self.path, dict(self.headers)))
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/api/v1/auth/cli/exchange":
            self._exchange(stand_in, body)
        elif self.path == "/api/v1/auth/logout" and stand_in.sessions.pop(self._cookie(), None):
            self._json(200, {"message": "Logged out"})
        else:
            self._json(401, {"error": {"code": "UNAUTHORIZED", "message": "no", "details": {}}})

    def _exchange(self, stand_in: StandIn, body: dict[str, Any]) -> None:
        challenge = stand_in.challenges.pop(body.get("ticket", ""), None)
        digest = hashlib.sha256(str(body.get("verifier", "")).encode()).digest()
        expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if challenge is None or challenge != expected:
            error = {"code": "OAUTH_ERROR", "message": "invalid ticket or verifier", "details": {}}
            self._json(400, {"error": error})
            return
        token = secrets.token_urlsafe(32)
        stand_in.sessions[token] = USER
        data = {"session": token, "expires_at": "2026-12-06T12:00:00Z", "user": USER}
        self._json(200, {"data": data})

    def _cookie(self) -> str:
        match = re.search(r"session_cookie=([^;]+)", self.headers.get("Cookie", ""))
        return match.group(1) if match else ""

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self.reply(status, json.dumps(body).encode(), "application/json")


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInHandler)
    server.daemon_threads = True
    server.stand_in = StandIn(server)  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.stand_in  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def login_cli(stand_in: StandIn, config_dir: Path) -> Cli:
    return Cli({**base_env(config_dir), "UPTIME_SERVER": stand_in.url})


def test_no_browser_prints_the_url_and_a_visit_completes_the_sign_in(
    stand_in: StandIn, config_dir: Path, login_cli: Cli
) -> None:
    args = ["login", "--provider", "github", "--no-browser", "--timeout", "30"]
    proc = start_uptime(["--server", stand_in.url, *args], config_dir)
    try:
        url, _ = read_login_url(proc)
        query = parse_qs(urlsplit(url).query)
        redirect = query["cli_redirect"][0]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/callback", redirect)
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", query["cli_challenge"][0])  # S256, unpadded
        page = requests.get(url, timeout=10)  # the "browser": stand-in, then the loopback
        assert page.status_code == 200
        assert "close this tab" in page.text
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "✓ Logged in" in err and "octo@example.com" in err
    path = credentials.credentials_path(stand_in.url, config_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())
    assert saved["session"] in stand_in.sessions
    assert saved["session"] not in out + err
    # the exchange was made by the CLI, marked as such
    exchange = [h for m, p, h in stand_in.requests if p == "/api/v1/auth/cli/exchange"]
    assert exchange and exchange[0].get("X-Requested-With") == "uptime"
    # and the saved session works for the next command
    assert login_cli.json("whoami")["email"] == "octo@example.com"
    # the loopback listener is gone: exactly one callback was accepted
    with pytest.raises(requests.ConnectionError):
        requests.get(redirect + "?ticket=again", timeout=5)


@dataclass
class FakeBrowser:
    """Stands in for ``webbrowser.open``: visits the URL from a thread, like a browser."""

    stray_first: bool = False
    statuses: list[int] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)

    def open(self, url: str, new: int = 0) -> bool:
        thread = threading.Thread(target=self._visit, args=(url,), daemon=True)
        self.threads.append(thread)
        thread.start()
        return True

    def _visit(self, url: str) -> None:
        if self.stray_first:  # e.g. a favicon request: it must not end the flow
            port = re.search(r"127\.0\.0\.1%3A(\d+)", url).group(1)  # type: ignore[union-attr]
            stray = requests.get(f"http://127.0.0.1:{port}/favicon.ico", timeout=5)
            self.statuses.append(stray.status_code)
        self.statuses.append(requests.get(url, timeout=5).status_code)

    def settle(self) -> list[int]:
        for thread in self.threads:
            thread.join(10)
        return self.statuses


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> FakeBrowser:
    fake = FakeBrowser()
    monkeypatch.setattr("webbrowser.open", fake.open)
    return fake


def test_with_a_display_it_opens_the_browser(login_cli: Cli, browser: FakeBrowser) -> None:
    browser.stray_first = True
    result = login_cli("login", "--provider", "google", "--timeout", "20", env={"DISPLAY": ":0"})
    assert result.exit_code == 0, describe(result)
    assert browser.settle() == [404, 200]
    assert "Opening the sign-in page in your browser" in result.stderr
    assert login_cli.json("whoami")["email"] == "octo@example.com"


def test_a_wrong_verifier_is_refused_and_nothing_saved(
    stand_in: StandIn,
    login_cli: Cli,
    config_dir: Path,
    browser: FakeBrowser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The CLI's exchange goes out with a verifier that does not match its challenge.
    import uptime_cli.login as login_module

    real = login_module.pkce_pair
    monkeypatch.setattr(login_module, "pkce_pair", lambda: (real()[0], real()[1]))
    result = login_cli("login", "--timeout", "20", env={"DISPLAY": ":0"})
    assert result.exit_code == 4, describe(result)
    assert "OAUTH_ERROR" in result.stderr
    assert not credentials.credentials_path(stand_in.url, config_dir).exists()
    assert browser.settle() == [200]


def test_an_error_callback_fails_the_sign_in(
    stand_in: StandIn, login_cli: Cli, browser: FakeBrowser
) -> None:
    stand_in.callback_error = "access_denied"
    result = login_cli("login", "--timeout", "20", env={"DISPLAY": ":0"})
    assert result.exit_code == 1, describe(result)
    assert "access_denied" in result.stderr
    assert browser.settle() == [400]


def test_without_a_display_the_browser_is_not_opened(login_cli: Cli, browser: FakeBrowser) -> None:
    result = login_cli("login", "--timeout", "0.2")  # DISPLAY unset in the runner's env
    assert result.exit_code == 3
    assert browser.threads == []
    assert "Open this URL in a browser" in result.stderr


def test_it_gives_up_after_the_timeout(login_cli: Cli) -> None:
    result = login_cli("login", "--no-browser", "--timeout", "0.3")
    assert result.exit_code == 3, describe(result)
    assert "timed out" in result.stderr
    assert URL_LINE.search(result.stderr)


def test_ctrl_c_while_waiting_exits_130(stand_in: StandIn, config_dir: Path) -> None:
    proc = start_uptime(["--server", stand_in.url, "login", "--no-browser"], config_dir)
    try:
        read_login_url(proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err


def test_logout_after_a_loopback_login(stand_in: StandIn, login_cli: Cli, config_dir: Path) -> None:
    proc = start_uptime(["--server", stand_in.url, "login", "--no-browser"], config_dir)
    try:
        url, _ = read_login_url(proc)
        requests.get(url, timeout=10)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    login_cli.ok("logout")
    assert stand_in.sessions == {}
    assert not credentials.credentials_path(stand_in.url, config_dir).exists()


def test_an_unknown_provider_fails_before_the_browser_opens(
    stand_in: StandIn, login_cli: Cli, browser: FakeBrowser, config_dir: Path
) -> None:
    result = login_cli("login", "--provider", "gitlab", "--timeout", "30", env={"DISPLAY": ":0"})
    assert result.exit_code == 4, describe(result)
    said = " ".join(result.stderr.split())  # as wrapped for the terminal
    assert "no sign-in provider 'gitlab'" in said
    assert "configured providers: github, google" in said
    assert "--provider NAME" in said
    assert browser.threads == [] and not URL_LINE.search(result.stderr)
    assert [p for m, p, h in stand_in.requests] == ["/api/v1/auth/gitlab/login"]
    assert not credentials.credentials_path(stand_in.url, config_dir).exists()


def test_an_unreachable_server_fails_before_the_browser_opens(
    config_dir: Path, browser: FakeBrowser
) -> None:
    cli = Cli({**base_env(config_dir), "UPTIME_SERVER": f"http://127.0.0.1:{closed_port()}"})
    result = cli("login", "--timeout", "30", env={"DISPLAY": ":0"})
    assert result.exit_code == 3, describe(result)
    assert "connection refused" in result.stderr
    assert browser.threads == [] and not URL_LINE.search(result.stderr)
