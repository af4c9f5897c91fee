"""Sign-in fixtures: real authorization servers on loopback and a "browser".

``auth_servers`` starts ``python -m tests.auth.servers`` once per test
session (per xdist worker): an Authlib-built OpenID Connect server (Google and
the generic providers) and a GitHub-like server, each on a port the OS picks.
The app under test talks to them over real HTTP; the test drives the browser
side by hand with the Flask test client (for the app) and ``requests`` (for
the provider's login form), following each redirect explicitly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.auth.browser import BASE_URL, Browser, callback_url

ROOT = Path(__file__).resolve().parents[2]
GITHUB_SECRET = "gh-secret-5b0c1f7e9d"
GOOGLE_SECRET = "google-secret-8a2d44c1"
CORP_SECRET = "corp-secret-31e7aa90"
OKTA_SECRET = "okta-secret-c4f19b2e"


@dataclass
class AuthServers:
    github: str
    oidc: str


@pytest.fixture(scope="session")
def auth_servers() -> Iterator[AuthServers]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.auth.servers"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=20)
    if not line or not line[0].strip():
        proc.kill()
        pytest.fail("the test authorization servers did not start")
    urls = json.loads(line[0])
    try:
        yield AuthServers(github=urls["github"], oidc=urls["oidc"])
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


class Providers:
    """Control of the test servers: users, faults, what they issued."""

    def __init__(self, servers: AuthServers) -> None:
        self.servers = servers
        self.http = requests.Session()

    def reset(self) -> None:
        for base in (self.servers.github, self.servers.oidc):
            self.http.post(f"{base}/_test/reset", timeout=5).raise_for_status()
        self._put(
            self.servers.github,
            "/_test/apps/gh-client",
            {
                "secret": GITHUB_SECRET,
                "callback": callback_url("github"),
            },
        )
        for name, secret in (
            ("google", GOOGLE_SECRET),
            ("corp", CORP_SECRET),
            ("okta", OKTA_SECRET),
        ):
            self._put(
                self.servers.oidc,
                f"/_test/clients/{name}-client",
                {
                    "secret": secret,
                    "redirect_uris": [callback_url(name)],
                },
            )

    def github_user(
        self,
        login: str,
        id: int,
        *,
        email: str | None = None,
        emails: list[dict[str, Any]] | None = None,
        name: str | None = None,
    ) -> None:
        self._put(
            self.servers.github,
            f"/_test/users/{login}",
            {
                "id": id,
                "email": email,
                "emails": emails or [],
                "name": name,
            },
        )

    def oidc_user(
        self,
        login: str,
        sub: str,
        email: str | None,
        *,
        verified: bool = True,
        name: str | None = None,
    ) -> None:
        self._put(
            self.servers.oidc,
            f"/_test/users/{login}",
            {
                "sub": sub,
                "email": email,
                "email_verified": verified,
                "name": name or login,
            },
        )

    def faults(self, **faults: Any) -> None:
        self._put(self.servers.oidc, "/_test/faults", faults)

    def issued(self) -> list[str]:
        out = []
        for base in (self.servers.github, self.servers.oidc):
            out += self.http.get(f"{base}/_test/issued", timeout=5).json()["issued"]
        return out

    def _put(self, base: str, path: str, body: dict[str, Any]) -> None:
        self.http.put(f"{base}{path}", json=body, timeout=5).raise_for_status()


@pytest.fixture
def providers(auth_servers: AuthServers) -> Providers:
    control = Providers(auth_servers)
    control.reset()
    control.github_user(
        "octocat",
        583231,
        emails=[
            {"email": "octo@old.example", "primary": False, "verified": True},
            {"email": "octocat@example.com", "primary": True, "verified": True},
        ],
        name="The Octocat",
    )
    control.oidc_user("gina", "108234987561230001", "gina@example.com", name="Gina")
    return control


@pytest.fixture
def extra_env() -> dict[str, str]:
    """Settings a test adds; parametrize it directly to change them.

    ``{github}`` and ``{oidc}`` in values become the test servers' URLs.
    """
    return {}


@pytest.fixture
def settings_env(
    settings_env: dict[str, str],
    auth_servers: AuthServers,
    providers: Providers,
    extra_env: dict[str, str],
) -> dict[str, str]:
    gh, op = auth_servers.github, auth_servers.oidc
    env = dict(settings_env)
    env.update(
        {
            "UPTIME_BASE_URL": BASE_URL,
            "UPTIME_OAUTH_GITHUB_CLIENT_ID": "gh-client",
            "UPTIME_OAUTH_GITHUB_CLIENT_SECRET": GITHUB_SECRET,
            "UPTIME_OAUTH_GITHUB_AUTHORIZE_URL": f"{gh}/login/oauth/authorize",
            "UPTIME_OAUTH_GITHUB_TOKEN_URL": f"{gh}/login/oauth/access_token",
            "UPTIME_OAUTH_GITHUB_USERINFO_URL": f"{gh}/user",
            "UPTIME_OAUTH_GOOGLE_CLIENT_ID": "google-client",
            "UPTIME_OAUTH_GOOGLE_CLIENT_SECRET": GOOGLE_SECRET,
            "UPTIME_OAUTH_GOOGLE_METADATA_URL": f"{op}/.well-known/openid-configuration",
            "UPTIME_OAUTH_CORP_CLIENT_ID": "corp-client",
            "UPTIME_OAUTH_CORP_CLIENT_SECRET": CORP_SECRET,
            "UPTIME_OAUTH_CORP_AUTHORIZE_URL": f"{op}/authorize",
            "UPTIME_OAUTH_CORP_TOKEN_URL": f"{op}/token",
            "UPTIME_OAUTH_CORP_USERINFO_URL": f"{op}/userinfo",
            "UPTIME_OAUTH_CORP_SCOPES": "profile email",
            "UPTIME_OAUTH_OKTA_CLIENT_ID": "okta-client",
            "UPTIME_OAUTH_OKTA_CLIENT_SECRET": OKTA_SECRET,
            "UPTIME_OAUTH_OKTA_METADATA_URL": f"{op}/.well-known/openid-configuration",
        }
    )
    env["UPTIME_ALLOWED_EMAILS"] = "*"
    env.update({k: v.format(github=gh, oidc=op) for k, v in extra_env.items()})
    return env


@pytest.fixture
def browser(app: Any) -> Browser:
    return Browser(app.test_client())


@pytest.fixture
def new_browser(app: Any) -> Any:
    return lambda: Browser(app.test_client())
