"""The test authorization servers: running them, and driving them from tests.

``running_auth_servers()`` starts ``python -m tests.auth.servers`` (an
Authlib-built OpenID Connect server and a GitHub-like server on loopback
ports the OS picks) and stops it afterwards. ``Providers`` registers the
app's clients and users with them, and ``provider_env`` is the app's
``UPTIME_OAUTH_*`` configuration pointing at them. Used by the sign-in tests
(tests/auth) and the CLI's end-to-end login (tests/cli).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[2]
GITHUB_SECRET = "gh-secret-5b0c1f7e9d"
GOOGLE_SECRET = "google-secret-8a2d44c1"
CORP_SECRET = "corp-secret-31e7aa90"
OKTA_SECRET = "okta-secret-c4f19b2e"
OIDC_CLIENTS = (("google", GOOGLE_SECRET), ("corp", CORP_SECRET), ("okta", OKTA_SECRET))


@dataclass
class AuthServers:
    github: str
    oidc: str


@contextmanager
def running_auth_servers() -> Iterator[AuthServers]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.auth.servers"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=20)
    if not line or not line[0].strip():
        proc.kill()
        raise RuntimeError("the test authorization servers did not start")
    urls = json.loads(line[0])
    try:
        yield AuthServers(github=urls["github"], oidc=urls["oidc"])
    finally:
        proc.stdin.close()  # the servers exit when their stdin closes
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        proc.stdout.close()


def provider_env(servers: AuthServers, base_url: str) -> dict[str, str]:
    """The app's settings for github, google (OIDC), corp (OAuth2) and okta (OIDC)."""
    gh, op = servers.github, servers.oidc
    return {
        "UPTIME_BASE_URL": base_url,
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


class Providers:
    """Control of the test servers: users, faults, what they issued."""

    def __init__(self, servers: AuthServers) -> None:
        self.servers = servers
        self.http = requests.Session()

    def reset(self, base_url: str) -> None:
        """Forget everything; register the app's clients with callbacks under *base_url*."""
        for base in (self.servers.github, self.servers.oidc):
            self.http.post(f"{base}/_test/reset", timeout=5).raise_for_status()
        self._put(
            self.servers.github,
            "/_test/apps/gh-client",
            {"secret": GITHUB_SECRET, "callback": callback_at(base_url, "github")},
        )
        for name, secret in OIDC_CLIENTS:
            self._put(
                self.servers.oidc,
                f"/_test/clients/{name}-client",
                {"secret": secret, "redirect_uris": [callback_at(base_url, name)]},
            )

    def add_standard_users(self) -> None:
        """octocat on GitHub (two verified addresses), gina on the OIDC server."""
        self.github_user(
            "octocat",
            583231,
            emails=[
                {"email": "octo@old.example", "primary": False, "verified": True},
                {"email": "octocat@example.com", "primary": True, "verified": True},
            ],
            name="The Octocat",
        )
        self.oidc_user("gina", "108234987561230001", "gina@example.com", name="Gina")

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
            {"id": id, "email": email, "emails": emails or [], "name": name},
        )

    def oidc_user(
        self,
        login: str,
        sub: str,
        email: str | None,
        *,
        verified: bool | None = True,  # None: no email_verified claim at all
        name: str | None = None,
    ) -> None:
        self._put(
            self.servers.oidc,
            f"/_test/users/{login}",
            {"sub": sub, "email": email, "email_verified": verified, "name": name or login},
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


def callback_at(base_url: str, provider: str) -> str:
    return f"{base_url}/api/v1/auth/{provider}/callback"
