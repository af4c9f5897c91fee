"""Sign-in with the github adapter against a GitHub-like server on loopback."""

from __future__ import annotations

import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.auth.browser import callback_url, oauth_error_reason, query, with_challenge
from uptime_server.auth.login_state import pkce_verifier, sha256
from uptime_server.models import Identity, OAuthState, Session, User


def test_it_signs_up_with_the_verified_primary_email(browser, providers, settings):
    authorize = browser.login("github", next="/monitors")
    params = query(authorize)
    assert authorize.startswith(providers.servers.github + "/login/oauth/authorize?")
    assert params["redirect_uri"] == callback_url("github")
    assert params["scope"] == "read:user user:email"
    assert params["code_challenge_method"] == "S256"
    assert "nonce" not in params
    assert OAuthState.get().state_hash == sha256(params["state"])
    verifier = pkce_verifier(params["state"], settings.secret_key)
    assert create_s256_code_challenge(verifier) == params["code_challenge"]

    r = browser.callback(browser.approve(authorize, "octocat"))
    assert r.status_code == 302
    assert r.headers["Location"] == "/monitors"
    me = browser.client.get("/api/v1/auth/user")
    assert me.status_code == 200, me.json
    assert me.json["data"]["email"] == "octocat@example.com"
    assert me.json["data"]["name"] == "The Octocat"
    assert me.json["data"]["provider"] == "github"
    identity = Identity.get(Identity.provider == "github")
    assert identity.subject == "583231"
    assert identity.user_id == me.json["data"]["id"]


def test_it_takes_the_public_email_when_github_shows_one(browser, providers):
    providers.github_user(
        "hubber",
        4242,
        email="hubber@example.com",
        emails=[
            {"email": "primary@example.com", "primary": True, "verified": True},
            {"email": "hubber@example.com", "primary": False, "verified": True},
        ],
    )
    assert browser.sign_in("github", "hubber").status_code == 302
    assert browser.client.get("/api/v1/auth/user").json["data"]["email"] == "hubber@example.com"


def test_it_matches_the_account_by_numeric_id_not_by_email(browser, new_browser, providers):
    assert browser.sign_in("github", "octocat").status_code == 302
    first = browser.client.get("/api/v1/auth/user").json["data"]["id"]
    providers.github_user(
        "octocat",
        583231,
        emails=[{"email": "renamed@example.com", "primary": True, "verified": True}],
    )
    other = new_browser()
    assert other.sign_in("github", "octocat").status_code == 302
    assert other.client.get("/api/v1/auth/user").json["data"]["id"] == first
    assert Identity.get(Identity.subject == "583231").email == "renamed@example.com"
    assert User.select().count() == 1


def test_no_verified_email_means_no_sign_up(browser, providers):
    providers.github_user(
        "ghost", 7, emails=[{"email": "ghost@example.com", "primary": True, "verified": False}]
    )
    r = browser.sign_in("github", "ghost")
    assert r.status_code == 403
    assert r.json["error"]["code"] == "SIGNUP_CLOSED"
    assert User.select().count() == 0


def test_the_server_rejects_a_wrong_pkce_verifier(browser, providers):
    """A code obtained for another challenge (code injection) fails PKCE."""
    authorize = browser.login("github")
    r = browser.callback(browser.approve(with_challenge(authorize, "attacker"), "octocat"))
    assert "bad_verification_code" in oauth_error_reason(r)
    assert browser.session_cookie() is None
    assert Session.select().count() == 0


def test_refused_consent_is_an_oauth_error(browser, providers):
    r = browser.callback(browser.approve(browser.login("github"), "octocat", consent="deny"))
    assert oauth_error_reason(r) == "access_denied"


@pytest.mark.parametrize(
    "extra_env", [{"UPTIME_OAUTH_GITHUB_TOKEN_URL": "http://127.0.0.1:1/token"}]
)
def test_an_unreachable_token_endpoint_is_an_oauth_error(browser, providers):
    r = browser.sign_in("github", "octocat")
    assert oauth_error_reason(r) == "ConnectionError"


@pytest.mark.parametrize(
    "extra_env", [{"UPTIME_OAUTH_GITHUB_EMAILS_URL": "{github}/no/such/emails"}]
)
def test_the_emails_url_setting_overrides_the_default_emails_url(browser, providers):
    r = browser.sign_in("github", "octocat")
    assert oauth_error_reason(r) == "HTTPError"


@pytest.mark.parametrize("path", ["login", "callback"])
def test_an_unknown_provider_is_not_found(anon, path):
    r = anon.get(f"/api/v1/auth/myspace/{path}")
    assert r.status_code == 404
    assert r.json["error"]["code"] == "PROVIDER_NOT_FOUND"
