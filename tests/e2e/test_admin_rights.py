"""Issue 29's attack on admin rights, against a real daemon and real providers on loopback.

The attack: admin rights followed an email address, and a generic OIDC
provider that leaves ``email_verified`` out was trusted, so a second
``admin@...`` account signed up through it was an admin: it minted an agent
token, read other users' monitor headers, and recorded a forged "down" for
another user's monitor. Here the daemon is ``uptime server run`` in a process
of its own, the providers are the test authorization servers
(tests/auth/servers) and the attacker is a browser played with ``requests``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.auth.providers import AuthServers, Providers, provider_env, running_auth_servers
from tests.e2e.conftest import UPTIME, Cluster, DaemonProcess
from uptime_server.auth.login_state import browser_cookie

pytestmark = pytest.mark.slow

ADMIN = "admin@example.com"
SECRET_HEADER = {"Authorization": "Bearer alice-private-token"}


@pytest.fixture(scope="module")
def auth_servers() -> Iterator[AuthServers]:
    with running_auth_servers() as servers:
        yield servers


@pytest.fixture
def server(make_cluster: Any, auth_servers: AuthServers) -> tuple[Any, ...]:
    """(cluster, daemon, providers): the daemon's OAuth settings point at the test servers."""
    cluster = make_cluster()
    cluster.env.update(
        UPTIME_LOCATIONS="local,eu-west",
        UPTIME_ADMINS=ADMIN,
        UPTIME_ALLOWED_EMAILS="*",
    )
    daemon = cluster.daemon()
    daemon.env.update(provider_env(auth_servers, daemon.base))
    providers = Providers(auth_servers)
    providers.reset(daemon.base)
    daemon.start()
    return cluster, daemon, providers


def local_session(cluster: Cluster, email: str) -> str:
    """``uptime server session --email EMAIL`` on the daemon's machine."""
    out = subprocess.run(
        [*UPTIME, "server", "session", "--email", email],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.strip()


def admins_listed(cluster: Cluster) -> list[str]:
    out = subprocess.run(
        [*UPTIME, "server", "admin", "list", "--json"],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [a["email"] for a in json.loads(out.stdout)["data"]]


def provider_sign_in(daemon: DaemonProcess, provider: str, user: str) -> requests.Response:
    """A browser's sign-in: the daemon's login, the provider's form, the daemon's callback."""
    http = requests.Session()
    login = f"{daemon.base}/api/v1/auth/{provider}/login"
    start = http.get(login, allow_redirects=False, timeout=10)
    assert start.status_code == 302, start.text
    # The state cookie is Secure, which requests keeps from plain http (a
    # browser sends it to 127.0.0.1): handed over by hand.
    name = browser_cookie(daemon.base).name
    state = start.cookies.get(name)
    assert state
    consent = http.post(
        start.headers["Location"],
        data={"login": user, "consent": "allow"},
        allow_redirects=False,
        timeout=10,
    )
    assert consent.status_code == 302, consent.text
    return requests.get(
        consent.headers["Location"], cookies={name: state}, allow_redirects=False, timeout=10
    )


def call(daemon: DaemonProcess, session: str, method: str, path: str, **kw: Any) -> Any:
    return requests.request(
        method,
        f"{daemon.base}/api/v1{path}",
        cookies={"session_cookie": session},
        timeout=10,
        **kw,
    )


def alice_monitor(daemon: DaemonProcess, alice: str) -> int:
    body = {
        "name": "billing",
        "type": "http",
        "url": "http://127.0.0.1:9/",
        "headers": SECRET_HEADER,
        "locations": ["eu-west"],
    }
    r = call(daemon, alice, "POST", "/monitors", json=body)
    assert r.status_code == 201, r.text
    return int(r.json()["data"]["id"])


def test_a_second_admin_account_through_a_generic_oidc_provider_is_refused(server):
    cluster, daemon, providers = server
    admin = local_session(cluster, ADMIN)
    alice = local_session(cluster, "alice@example.com")
    monitor_id = alice_monitor(daemon, alice)
    # The attacker's account at a generic OIDC provider claims the admin's
    # address, and the provider says nothing of whether it is verified.
    providers.oidc_user("mallory", "6660001", ADMIN, verified=None)

    r = provider_sign_in(daemon, "okta", "mallory")

    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "EMAIL_IN_USE"
    assert "session_cookie" not in r.cookies
    assert call(daemon, admin, "GET", "/auth/user").json()["data"]["is_admin"] is True
    assert admins_listed(cluster) == [ADMIN]
    # Nothing else came of it: no agent token, alice's monitor untouched.
    assert call(daemon, admin, "GET", "/agents").json()["data"] == []
    shown = call(daemon, alice, "GET", f"/monitors/{monitor_id}").json()["data"]
    assert shown["status"] == "pending" and shown["headers"] == SECRET_HEADER


def test_the_admins_address_taken_first_through_a_generic_oidc_provider_makes_no_admin(server):
    cluster, daemon, providers = server
    alice = local_session(cluster, "alice@example.com")
    alice_monitor(daemon, alice)
    providers.oidc_user("mallory", "6660001", ADMIN, verified=None)

    r = provider_sign_in(daemon, "okta", "mallory")
    assert r.status_code == 302, r.text
    mallory = r.cookies["session_cookie"]

    minted = call(daemon, mallory, "POST", "/agents", json={"location": "eu-west"})
    assert minted.status_code == 403, minted.text
    assert minted.json()["error"]["code"] == "FORBIDDEN"
    me = call(daemon, mallory, "GET", "/auth/user").json()["data"]
    assert (me["email"], me["is_admin"]) == (ADMIN, False)
    # The owner's local sign-in with that address lands on the account a
    # provider signs into: it vouches for nothing there.
    local_session(cluster, ADMIN)
    assert call(daemon, mallory, "POST", "/agents", json={"location": "eu-west"}).status_code == 403
    assert admins_listed(cluster) == []
