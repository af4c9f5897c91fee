"""Sign-in fixtures: real authorization servers on loopback and a "browser".

``auth_servers`` starts ``python -m tests.auth.servers`` once per test
session (per xdist worker): an Authlib-built OpenID Connect server (Google and
the generic providers) and a GitHub-like server, each on a port the OS picks.
The app under test talks to them over real HTTP; the test drives the browser
side by hand with the Flask test client (for the app) and ``requests`` (for
the provider's login form), following each redirect explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.auth.browser import BASE_URL, Browser
from tests.auth.providers import (
    CORP_SECRET,
    GITHUB_SECRET,
    GOOGLE_SECRET,
    OKTA_SECRET,
    AuthServers,
    Providers,
    provider_env,
    running_auth_servers,
)

__all__ = ["CORP_SECRET", "GITHUB_SECRET", "GOOGLE_SECRET", "OKTA_SECRET"]


@pytest.fixture(scope="session")
def auth_servers() -> Iterator[AuthServers]:
    try:
        with running_auth_servers() as servers:
            yield servers
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def providers(auth_servers: AuthServers) -> Providers:
    control = Providers(auth_servers)
    control.reset(BASE_URL)
    control.add_standard_users()
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
    env = {**settings_env, **provider_env(auth_servers, BASE_URL)}
    env["UPTIME_ALLOWED_EMAILS"] = "*"
    env.update({k: v.format(github=gh, oidc=op) for k, v in extra_env.items()})
    return env


@pytest.fixture
def browser(app: Any) -> Browser:
    return Browser(app.test_client())


@pytest.fixture
def new_browser(app: Any) -> Any:
    return lambda: Browser(app.test_client())
