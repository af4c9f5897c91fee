"""Open-redirect attempts on ``next`` and on ``cli_redirect``."""

from __future__ import annotations

import pytest

from uptime_server.auth.cli_handoff import is_loopback_redirect
from uptime_server.auth.login_state import safe_next

CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

HOSTILE_NEXT = [
    "//evil.example/x",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "evil.example/x",
    "/\\evil.example",
    "\\\\evil.example",
    "/\t/evil.example",
    " //evil.example",
    "%2F%2Fevil.example",
    "/%2F%2Fevil.example",
    "/%5Cevil.example",
    "/%09/evil.example",
    "///evil.example",
]

HOSTILE_CLI = [
    "http://evil.example:8000/callback",
    "https://127.0.0.1:8000/callback",
    "http://127.0.0.1/callback",
    "http://127.0.0.1:0/callback",
    "http://127.0.0.1:99999/callback",
    "http://127.0.0.1.evil.example:8000/callback",
    "http://localhost.evil.example:8000/callback",
    "http://127.0.0.1:8000@evil.example/callback",
    "http://user@127.0.0.1:8000/callback",
    "http://127.0.0.1:8000\\@evil.example/",
    "http://[::2]:8000/callback",
    "http://10.0.0.1:8000/callback",
    "//127.0.0.1:8000/callback",
    "javascript://127.0.0.1:8000/%0aalert(1)",
    "http://127.0.0.1:8000",
    "http://127.0.0.1:8000/callback#x",
    "http://127.0.0.1:8000/ callback",
]


@pytest.mark.parametrize("value", HOSTILE_NEXT)
def test_safe_next_refuses_other_sites(value):
    assert safe_next(value) == "/"


@pytest.mark.parametrize("value", ["/", "/monitors", "/monitors/3?tab=history&x=1", "/a/b%20c"])
def test_safe_next_keeps_paths_on_this_site(value):
    assert safe_next(value) == value


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("value", ["//evil.example/x", "https://evil.example/", "/\\evil.example"])
def test_a_hostile_next_lands_on_the_home_page(browser, providers, value):
    r = browser.sign_in("github", "octocat", next=value)
    assert r.status_code == 302
    assert r.headers["Location"] == "/"


@pytest.mark.parametrize("value", HOSTILE_CLI)
def test_only_loopback_http_with_a_port_is_a_cli_redirect(value):
    assert not is_loopback_redirect(value)


@pytest.mark.parametrize(
    "value",
    [
        "http://127.0.0.1:53682/callback",
        "http://[::1]:53682/callback",
        "http://localhost:53682/cb?session=abc",
    ],
)
def test_loopback_cli_redirects_are_accepted(value):
    assert is_loopback_redirect(value)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("value", HOSTILE_CLI[:8])
def test_login_refuses_a_hostile_cli_redirect(anon, providers, value):
    r = anon.get(
        "/api/v1/auth/github/login",
        query_string={
            "cli_redirect": value,
            "cli_challenge": CHALLENGE,
        },
    )
    assert r.status_code == 400
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
    assert "cli_redirect" in r.json["error"]["details"]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "params",
    [
        {"cli_redirect": "http://127.0.0.1:53682/callback"},
        {"cli_redirect": "http://127.0.0.1:53682/callback", "cli_challenge": "plain-verifier"},
        {"cli_challenge": CHALLENGE},
    ],
)
def test_login_needs_a_cli_redirect_and_an_s256_challenge_together(anon, providers, params):
    r = anon.get("/api/v1/auth/github/login", query_string=params)
    assert r.status_code == 400
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
