"""Linking provider accounts to the signed-in user, and session rotation."""

from __future__ import annotations

import pytest

from tests.auth.browser import Browser
from uptime_server.models import Identity, Session


def test_a_provider_login_while_signed_in_links_the_account(alice, providers, new_browser):
    browser = Browser(alice.client)
    r = browser.sign_in("github", "octocat")
    assert r.status_code == 302
    assert Identity.get(Identity.provider == "github").user_id == alice.user.id
    me = browser.client.get("/api/v1/auth/user").json["data"]
    assert (me["id"], me["provider"]) == (alice.user.id, "github")
    # Later, the linked account alone signs in as alice.
    other = new_browser()
    assert other.sign_in("github", "octocat").status_code == 302
    assert other.client.get("/api/v1/auth/user").json["data"]["id"] == alice.user.id


def test_linking_rotates_the_session(alice, providers):
    browser = Browser(alice.client)
    assert browser.sign_in("google", "gina").status_code == 302
    new_token = browser.session_cookie()
    assert new_token and new_token != alice.token
    assert Session.select().count() == 1
    alice.client.set_cookie("session_cookie", alice.token)
    assert alice.get("/api/v1/auth/user").status_code == 401


def test_an_account_linked_to_someone_else_is_in_use(alice, bob, providers):
    assert Browser(alice.client).sign_in("github", "octocat").status_code == 302
    r = Browser(bob.client).sign_in("github", "octocat")
    assert r.status_code == 409
    assert r.json["error"]["code"] == "IDENTITY_IN_USE"
    # Bob keeps his session and his own account.
    me = bob.get("/api/v1/auth/user")
    assert me.status_code == 200
    assert me.json["data"]["id"] == bob.user.id
    assert Identity.get(Identity.provider == "github").user_id != bob.user.id


@pytest.mark.parametrize("extra_env", [{"UPTIME_ALLOWED_EMAILS": "@nowhere.example"}])
def test_linking_needs_no_sign_up(alice, providers):
    assert Browser(alice.client).sign_in("github", "octocat").status_code == 302
    assert Identity.get(Identity.provider == "github").user_id == alice.user.id


def test_every_sign_in_issues_a_new_session_token(browser, providers):
    # A token planted before sign-in (session fixation) is never adopted.
    browser.client.set_cookie("session_cookie", "planted-by-someone-else")
    assert browser.sign_in("github", "octocat").status_code == 302
    first = browser.session_cookie()
    assert first != "planted-by-someone-else"
    assert browser.sign_in("github", "octocat").status_code == 302
    second = browser.session_cookie()
    assert second != first
    assert Session.select().count() == 1
    assert browser.client.get("/api/v1/auth/user").status_code == 200
