"""Sign-in with OpenID Connect (google, a generic OIDC provider) and a generic
OAuth2 provider, against the Authlib-built authorization server on loopback.

The id_token checks are exercised with real tokens: the server is told to
issue them with a wrong audience, issuer, nonce, expiry or signature.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.auth.browser import callback_url, oauth_error_reason, query, with_challenge
from uptime_server.auth.login_state import pkce_verifier, sha256
from uptime_server.models import Identity, OAuthState, Session, User


def test_it_signs_in_with_google_through_discovery(browser, providers, settings):
    authorize = browser.login("google")
    params = query(authorize)
    assert authorize.startswith(providers.servers.oidc + "/authorize?")
    assert params["redirect_uri"] == callback_url("google")
    assert params["scope"] == "openid email profile"
    assert params["code_challenge_method"] == "S256"
    row = OAuthState.get(OAuthState.state_hash == sha256(params["state"]))
    verifier = pkce_verifier(params["state"], settings.secret_key)
    assert create_s256_code_challenge(verifier) == params["code_challenge"]
    assert params["nonce"] == row.nonce

    r = browser.callback(browser.approve(authorize, "gina"))
    assert r.status_code == 302
    assert r.headers["Location"] == "/"
    me = browser.client.get("/api/v1/auth/user").json["data"]
    assert me["email"] == "gina@example.com"
    assert me["provider"] == "google"
    assert Identity.get(Identity.provider == "google").subject == "108234987561230001"


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ({"aud": "someone-else"}, "'aud'"),
        ({"aud": ["someone-else", "google-client"]}, "'azp'"),
        ({"iss": "http://127.0.0.1:9/evil"}, "'iss'"),
        ({"nonce": "a-nonce-from-another-sign-in"}, "'nonce'"),
        ({"exp_offset": -3600}, "expired"),
        ({"rogue_signature": True}, "bad_signature"),
    ],
    ids=["audience", "extra-audience", "issuer", "nonce", "expired", "signature"],
)
def test_a_bad_id_token_is_refused(browser, providers, fault, reason):
    providers.faults(**fault)
    r = browser.sign_in("google", "gina")
    assert reason in oauth_error_reason(r)
    assert browser.session_cookie() is None
    assert User.select().count() == 0


def test_a_nonce_changed_on_the_way_is_refused(browser, providers):
    authorize = browser.login("google")
    params = query(authorize)
    params["nonce"] = "chosen-by-an-attacker"
    tampered = f"{authorize.split('?')[0]}?{urlencode(params)}"
    r = browser.callback(browser.approve(tampered, "gina"))
    assert "nonce" in oauth_error_reason(r)


def test_the_server_rejects_a_wrong_pkce_verifier(browser, providers):
    """A code obtained for another challenge (code injection) fails PKCE."""
    authorize = browser.login("google")
    r = browser.callback(browser.approve(with_challenge(authorize, "attacker"), "gina"))
    assert "invalid_grant" in oauth_error_reason(r)
    assert Session.select().count() == 0


def test_the_server_requires_pkce(browser, providers):
    """The test server is strict: without a challenge it refuses to start."""
    authorize = browser.login("google")
    params = {k: v for k, v in query(authorize).items() if not k.startswith("code_challenge")}
    page = browser.http.get(f"{authorize.split('?')[0]}?{urlencode(params)}", timeout=5)
    assert page.status_code == 400
    assert "PKCE" in page.json()["error_description"]


def test_an_unverified_email_cannot_sign_up(browser, providers):
    providers.oidc_user("mallory", "666", "owner@example.com", verified=False)
    r = browser.sign_in("google", "mallory")
    assert r.status_code == 403
    assert r.json["error"]["code"] == "SIGNUP_CLOSED"


def test_a_generic_oauth2_provider_signs_in_through_userinfo(browser, providers):
    authorize = browser.login("corp")
    params = query(authorize)
    assert params["scope"] == "profile email"
    assert "nonce" not in params
    assert params["redirect_uri"] == callback_url("corp")
    assert browser.callback(browser.approve(authorize, "gina")).status_code == 302
    me = browser.client.get("/api/v1/auth/user").json["data"]
    assert (me["provider"], me["email"]) == ("corp", "gina@example.com")
    assert Identity.get(Identity.provider == "corp").subject == "108234987561230001"


def test_a_generic_oidc_provider_is_one_identity_per_provider(browser, new_browser, providers):
    assert browser.sign_in("google", "gina").status_code == 302
    # The same sub at another provider, with an address of its own: a
    # different account, never merged by sub (nor by email).
    providers.oidc_user("gina-at-okta", "108234987561230001", "gina@okta.example")
    other = new_browser()
    authorize = other.login("okta")
    assert "nonce" in query(authorize)
    assert other.callback(other.approve(authorize, "gina-at-okta")).status_code == 302
    me = other.client.get("/api/v1/auth/user").json["data"]
    assert me["provider"] == "okta"
    assert browser.client.get("/api/v1/auth/user").json["data"]["id"] != me["id"]
    assert User.select().count() == 2


def test_the_provider_is_called_with_the_exact_redirect_uri(browser, providers):
    """The server checks redirect_uri at the token endpoint as well."""
    authorize = browser.login("google")
    callback = browser.approve(authorize, "gina")
    assert urlsplit(callback)._replace(query="").geturl() == callback_url("google")
    assert browser.callback(callback).status_code == 302


def test_claims_missing_from_the_id_token_come_from_userinfo(browser, providers):
    providers.faults(lean_id_token=True)
    assert browser.sign_in("google", "gina").status_code == 302
    me = browser.client.get("/api/v1/auth/user").json["data"]
    assert (me["email"], me["name"]) == ("gina@example.com", "Gina")


def test_userinfo_about_another_subject_is_refused(browser, providers):
    providers.faults(lean_id_token=True, userinfo_sub="someone-else")
    r = browser.sign_in("google", "gina")
    assert "different subject" in oauth_error_reason(r)


@pytest.mark.parametrize(
    "extra_env", [{"UPTIME_OAUTH_GOOGLE_METADATA_URL": "http://127.0.0.1:1/.well-known/x"}]
)
def test_an_unreachable_discovery_document_is_an_oauth_error(anon, providers):
    r = anon.get("/api/v1/auth/google/login")
    assert r.status_code == 400
    assert r.json["error"]["code"] == "OAUTH_ERROR"


def test_the_server_rejects_the_wrong_verifier_at_the_token_endpoint(
    browser, providers, monkeypatch
):
    """The callback sends a verifier that does not match the login's challenge."""
    from uptime_server.api import signin

    authorize = browser.login("google")
    code_url = browser.approve(authorize, "gina")
    monkeypatch.setattr(
        signin.login_state, "pkce_verifier", lambda state, key: "w" * 43, raising=True
    )
    r = browser.callback(code_url)
    assert "invalid_grant" in oauth_error_reason(r)
    assert Session.select().count() == 0
