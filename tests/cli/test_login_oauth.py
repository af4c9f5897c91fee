"""``uptime login`` end to end: the CLI, the daemon and real authorization servers.

The daemon is the app served by waitress on 127.0.0.1, its ``UPTIME_OAUTH_*``
settings pointing at the test authorization servers (tests/auth/servers: a
GitHub-like one and an OpenID Connect one, in a process of their own).
``uptime login --no-browser`` runs as a process; the test plays the browser
with ``requests``: it opens the printed URL, goes through the daemon's
redirect to the provider, fills in the provider's login form, follows the
provider back to the daemon's callback and from there to the CLI's loopback
listener. The CLI then exchanges the ticket, saves the session and confirms
who signed in; ``uptime whoami`` works with what it saved.
"""

from __future__ import annotations

import json
import socket
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from tests.auth.providers import AuthServers, Providers, provider_env, running_auth_servers
from tests.cli.conftest import Cli, base_env, describe
from tests.cli.login_process import read_login_url, start_uptime
from tests.live_server import serving
from uptime_cli import credentials
from uptime_cli.client import ApiClient, ApiRefused
from uptime_server import db
from uptime_server.models import OAuthState, Session, User

# provider → (login at the provider, the email the daemon learns)
ACCOUNTS = {"github": ("octocat", "octocat@example.com"), "google": ("gina", "gina@example.com")}


@pytest.fixture(scope="module")
def auth_servers() -> Iterator[AuthServers]:
    with running_auth_servers() as servers:
        yield servers


@pytest.fixture
def providers(auth_servers: AuthServers, base_url: str) -> Providers:
    control = Providers(auth_servers)
    control.reset(base_url)
    control.add_standard_users()
    return control


@pytest.fixture
def settings_env(
    settings_env: dict[str, str], auth_servers: AuthServers, base_url: str
) -> dict[str, str]:
    return {
        **settings_env,
        **provider_env(auth_servers, base_url),
        "UPTIME_ALLOWED_EMAILS": "*",
    }


@pytest.fixture
def daemon(app: Any, listener: socket.socket, base_url: str, providers: Providers) -> Iterator[str]:
    with serving(app, sock=listener):
        yield base_url


class LoopbackBrowser(requests.Session):
    """Browsers treat http://127.0.0.1 as a secure context and send Secure
    cookies there (the daemon's sign-in state cookie is one); requests does
    not, so cookies of 127.0.0.1 lose the flag once stored."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        response = super().send(request, **kwargs)
        for cookie in self.cookies:
            if cookie.domain == "127.0.0.1":
                cookie.secure = False
        return response


@dataclass
class Visit:
    """What the browser saw: the daemon's last redirect and the loopback page."""

    to_cli: str
    page: requests.Response
    browser: requests.Session


def visit(url: str, daemon: str, login: str, consent: str = "allow") -> Visit:
    """Open the CLI's sign-in URL and click through, one redirect at a time."""
    browser = LoopbackBrowser()
    to_provider = browser.get(url, allow_redirects=False, timeout=10)
    assert to_provider.status_code == 302, to_provider.text
    authorize = to_provider.headers["Location"]
    assert not authorize.startswith(daemon)
    form = browser.get(authorize, timeout=10)
    assert form.status_code == 200 and "<form" in form.text, form.text
    back = browser.post(
        authorize, data={"login": login, "consent": consent}, allow_redirects=False, timeout=10
    )
    assert back.status_code == 302, back.text
    callback = back.headers["Location"]
    assert callback.startswith(f"{daemon}/api/v1/auth/"), callback
    to_cli = browser.get(callback, allow_redirects=False, timeout=10)
    assert to_cli.status_code == 302, to_cli.text
    cli_redirect = parse_qs(urlsplit(url).query)["cli_redirect"][0]
    assert to_cli.headers["Location"].startswith(cli_redirect + "?")
    page = browser.get(to_cli.headers["Location"], timeout=10)
    return Visit(to_cli.headers["Location"], page, browser)


def run_login(
    daemon: str, config_dir: Path, provider: str, consent: str = "allow"
) -> tuple[Visit, subprocess.CompletedProcess[str]]:
    args = ["--server", daemon, "login", "--provider", provider, "--no-browser", "--timeout", "30"]
    proc = start_uptime(args, config_dir)
    try:
        url, _ = read_login_url(proc)
        seen = visit(url, daemon, ACCOUNTS[provider][0], consent)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return seen, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("provider", ["github", "google"])
def test_login_through_the_provider_saves_a_working_session(
    daemon: str, config_dir: Path, provider: str
) -> None:
    seen, done = run_login(daemon, config_dir, provider)

    assert seen.page.status_code == 200 and "close this tab" in seen.page.text
    assert done.returncode == 0, done.stderr
    email = ACCOUNTS[provider][1]
    assert f"Logged in as {email} on {daemon}" in done.stderr
    # The browser got no session of its own: the sign-in was for the CLI.
    assert "session_cookie" not in seen.browser.cookies
    ticket = parse_qs(urlsplit(seen.to_cli).query)["ticket"][0]
    path = credentials.credentials_path(daemon, config_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())
    assert saved["server"] == daemon and saved["provider"] == provider
    for secret in (saved["session"], ticket):
        assert secret not in done.stdout + done.stderr
    with db.database.connection_context():
        session = Session.select(Session, User).join(User).get()
    assert (session.user.email, session.provider) == (email, provider)

    # The next command needs no --server: the saved login names it.
    whoami = Cli(base_env(config_dir)).json("whoami")
    assert (whoami["email"], whoami["provider"]) == (email, provider)


@pytest.mark.parametrize("provider", ["github", "google"])
def test_a_denied_consent_fails_the_login_and_saves_nothing(
    daemon: str, config_dir: Path, provider: str
) -> None:
    seen, done = run_login(daemon, config_dir, provider, consent="deny")

    assert seen.page.status_code == 400
    assert parse_qs(urlsplit(seen.to_cli).query)["error"] == ["OAUTH_ERROR"]
    assert done.returncode == 1, done.stderr
    assert "sign-in failed" in done.stderr and "access_denied" in done.stderr
    assert "Logged in" not in done.stderr
    assert not credentials.credentials_path(daemon, config_dir).exists()
    with db.database.connection_context():
        assert Session.select().count() == 0
    result = Cli(base_env(config_dir))("whoami")
    assert result.exit_code != 0, describe(result)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_unknown_provider_fails_fast_and_names_the_configured_ones(
    daemon: str, config_dir: Path
) -> None:
    args = ["--server", daemon, "login", "--provider", "gitlab", "--no-browser", "--timeout", "60"]
    proc = start_uptime(args, config_dir)
    try:
        out, err = proc.communicate(timeout=20)  # well before the sign-in timeout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 4, err
    said = " ".join(err.split())  # as wrapped for the terminal
    assert f"{daemon} has no sign-in provider 'gitlab'" in said
    assert "configured providers: corp, github, google, okta" in said
    assert "--provider NAME" in said and "/login?" not in said
    assert not credentials.credentials_path(daemon, config_dir).exists()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_provider_check_leaves_no_sign_in_state(daemon: str) -> None:
    client = ApiClient(daemon)
    for provider in ("github", "google"):  # OAuth2 and OpenID Connect
        client.check_login_provider(provider)
    with pytest.raises(ApiRefused) as refused:
        client.check_login_provider("gitlab")
    assert (refused.value.status, refused.value.code) == (404, "PROVIDER_NOT_FOUND")
    with db.database.connection_context():
        assert OAuthState.select().count() == 0
