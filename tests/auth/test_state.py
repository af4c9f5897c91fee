"""The OAuth state: random, single-use, bound to the browser, ten minutes."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest

from tests.auth.browser import query
from uptime_server.auth.login_state import COOKIE_NAME, HOST_COOKIE_NAME, sha256
from uptime_server.models import OAuthState


def _callback_with(browser, callback: str, **changes: str | None) -> object:
    params = {**query(callback), **changes}
    params = {k: v for k, v in params.items() if v is not None}
    return browser.client.get(f"{urlsplit(callback).path}?{urlencode(params)}")


def _assert_mismatch(r) -> None:
    assert r.status_code == 400, r.get_data(as_text=True)
    assert r.json["error"]["code"] == "OAUTH_STATE_MISMATCH"


def test_a_missing_state_is_refused(browser, providers):
    callback = browser.approve(browser.login("github"), "octocat")
    _assert_mismatch(_callback_with(browser, callback, state=None))


def test_a_wrong_state_is_refused(browser, providers):
    callback = browser.approve(browser.login("github"), "octocat")
    _assert_mismatch(_callback_with(browser, callback, state="not-the-state-we-sent"))


def test_a_replayed_callback_is_refused(browser, providers):
    callback = browser.approve(browser.login("github"), "octocat")
    assert browser.callback(callback).status_code == 302
    _assert_mismatch(browser.callback(callback))


def test_a_callback_in_another_browser_is_refused(browser, new_browser, providers):
    """Login CSRF: a victim's browser must not finish the attacker's sign-in."""
    callback = browser.approve(browser.login("github"), "octocat")
    _assert_mismatch(new_browser().callback(callback))
    # The state was not used up by the foreign browser.
    assert browser.callback(callback).status_code == 302


def test_a_forged_browser_cookie_is_refused(browser, providers):
    callback = browser.approve(browser.login("github"), "octocat")
    browser.client.set_cookie(COOKIE_NAME, "forged.value", path="/api/v1/auth")
    _assert_mismatch(browser.callback(callback))


def test_a_state_is_good_for_ten_minutes_and_no_longer(browser, providers, clock):
    # Just inside the ten minutes a sign-in still finishes (a shorter lifetime
    # fails here); just past them it does not.
    callback = browser.approve(browser.login("github"), "octocat")
    clock.advance(599)
    assert browser.callback(callback).status_code == 302
    callback = browser.approve(browser.login("github"), "octocat")
    clock.advance(601)
    _assert_mismatch(browser.callback(callback))


def test_a_state_is_good_for_its_own_provider_only(browser, providers):
    callback = browser.approve(browser.login("github"), "octocat")
    _assert_mismatch(browser.client.get(f"/api/v1/auth/google/callback?{urlsplit(callback).query}"))


def test_a_provider_error_with_a_bad_state_is_a_state_mismatch(anon, providers):
    _assert_mismatch(anon.get("/api/v1/auth/github/callback?error=access_denied&state=x"))


def test_only_hashes_are_stored_and_the_cookie_is_locked_down(browser, providers):
    r = browser.client.get("/api/v1/auth/google/login")
    state = query(r.headers["Location"])["state"]
    row = OAuthState.get()
    assert row.state_hash == sha256(state)
    assert state not in row.browser_hash and state not in row.next_url
    cookie = next(h for h in r.headers.getlist("Set-Cookie") if h.startswith(COOKIE_NAME))
    for attribute in ("HttpOnly", "Secure", "SameSite=Lax", "Path=/api/v1/auth", "Max-Age=600"):
        assert attribute in cookie
    assert browser.client.get_cookie(COOKIE_NAME, path="/api/v1/auth").value not in row.browser_hash


def test_two_sign_ins_under_way_in_one_browser_both_finish(browser, providers):
    first = browser.approve(browser.login("github"), "octocat")
    second = browser.approve(browser.login("google"), "gina")
    assert browser.callback(first).status_code == 302
    assert browser.callback(second).status_code == 302


HTTPS_BASE = "https://uptime.example.com"


@pytest.mark.parametrize("extra_env", [{"UPTIME_BASE_URL": HTTPS_BASE}])
@pytest.mark.parametrize("provider, login", [("github", "octocat"), ("google", "gina")])
def test_over_https_the_browser_cookie_is_host_prefixed(
    browser, new_browser, providers, provider, login
):
    providers.reset(HTTPS_BASE)  # the clients' callbacks under the https base URL
    providers.add_standard_users()
    r = browser.client.get(f"/api/v1/auth/{provider}/login")
    [cookie] = [h for h in r.headers.getlist("Set-Cookie") if COOKIE_NAME in h]
    name, _, attributes = cookie.partition("=")
    assert name == HOST_COOKIE_NAME == "__Host-uptime_oauth"
    # What browsers demand of a __Host- cookie: Secure, Path=/, no Domain.
    parts = {p.strip().split("=")[0].lower(): p.strip() for p in attributes.split(";")}
    assert "secure" in parts and parts["path"] == "Path=/" and "domain" not in parts
    assert {"httponly", "samesite", "max-age"} <= set(parts)

    callback = browser.approve(r.headers["Location"], login)
    assert callback.startswith(f"{HTTPS_BASE}/api/v1/auth/{provider}/callback")
    # The same browser id under the unprefixed name, as a sibling host could
    # plant it, does not count.
    planted = new_browser()
    planted.client.set_cookie(COOKIE_NAME, browser.client.get_cookie(HOST_COOKIE_NAME).value)
    _assert_mismatch(planted.client.get(urlsplit(callback).path, query_string=query(callback)))
    done = browser.client.get(urlsplit(callback).path, query_string=query(callback))
    assert done.status_code == 302, done.get_data(as_text=True)
    assert browser.session_cookie()


def test_over_http_the_browser_cookie_keeps_its_name_and_path(browser, providers):
    r = browser.client.get("/api/v1/auth/github/login")
    names = [h.partition("=")[0] for h in r.headers.getlist("Set-Cookie")]
    assert names == [COOKIE_NAME]
    assert browser.client.get_cookie(COOKIE_NAME, path="/api/v1/auth") is not None
