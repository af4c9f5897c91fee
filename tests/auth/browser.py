"""A browser for sign-in tests, driven by hand.

The app is reached through the Flask test client, the provider's login form
through ``requests``; every redirect is followed explicitly so tests can look
at (and tamper with) each hop.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.api.shapes import assert_error

BASE_URL = "http://127.0.0.1:8080"


def oauth_error_reason(response: Any) -> str:
    """The response is a 400 OAUTH_ERROR in the spec's error shape; the one reason it names."""
    error = assert_error(response, 400, "OAUTH_ERROR", "reason")
    [reason] = error["details"]["reason"]
    return reason


def callback_url(provider: str) -> str:
    return f"{BASE_URL}/api/v1/auth/{provider}/callback"


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def with_challenge(authorize_url: str, verifier_seed: str) -> str:
    """*authorize_url* with the code_challenge of another verifier."""
    params = query(authorize_url)
    params["code_challenge"] = create_s256_code_challenge(verifier_seed * 8)
    return f"{authorize_url.split('?')[0]}?{urlencode(params)}"


class Browser:
    """One browser: the app through the Flask test client, the provider's
    login form through ``requests``. Redirects are followed by hand."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.http = requests.Session()

    def login(self, provider: str, **params: str) -> str:
        """Start a sign-in; return the provider's authorization URL."""
        r = self.client.get(f"/api/v1/auth/{provider}/login", query_string=params)
        assert r.status_code == 302, r.get_data(as_text=True)
        return r.headers["Location"]

    def approve(self, authorize_url: str, login: str, consent: str = "allow") -> str:
        """Sign in at the provider's form; return where it sends the browser."""
        page = self.http.get(authorize_url, timeout=5)
        assert page.status_code == 200, page.text
        assert "<form" in page.text
        r = self.http.post(
            authorize_url,
            data={"login": login, "consent": consent},
            allow_redirects=False,
            timeout=5,
        )
        assert r.status_code == 302, r.text
        return r.headers["Location"]

    def callback(self, url: str) -> Any:
        """Follow the provider's redirect back to the app."""
        assert url.startswith(f"{BASE_URL}/api/v1/auth/"), url
        parts = urlsplit(url)
        return self.client.get(parts.path, query_string=parts.query)

    def sign_in(self, provider: str, login: str, **params: str) -> Any:
        return self.callback(self.approve(self.login(provider, **params), login))

    def session_cookie(self) -> str | None:
        cookie = self.client.get_cookie("session_cookie")
        return cookie.value if cookie else None
