"""Who may sign up: UPTIME_ALLOWED_EMAILS, or only the first account."""

from __future__ import annotations

import pytest

from uptime_server.auth.signup import email_allowed
from uptime_server.models import User


@pytest.mark.parametrize(
    ("email", "allowed", "expected"),
    [
        ("ann@example.com", ("*",), True),
        ("ann@example.com", ("ann@example.com",), True),
        ("Ann@Example.COM", ("ann@example.com",), True),
        ("ann@example.com", ("@example.com",), True),
        ("ann@example.com", ("@EXAMPLE.com",), True),
        ("ann@sub.example.com", ("@example.com",), False),
        ("ann@example.com.evil", ("@example.com",), False),
        ("ann@evil-example.com", ("example.com",), False),
        ("bob@example.com", ("ann@example.com",), False),
        ("ann@example.com", (), False),
    ],
)
def test_email_allowed(email, allowed, expected):
    assert email_allowed(email, allowed) is expected


@pytest.mark.parametrize("extra_env", [{"UPTIME_ALLOWED_EMAILS": "@corp.example,ann@x.example"}])
def test_sign_up_is_closed_to_others(browser, providers):
    r = browser.sign_in("github", "octocat")
    assert r.status_code == 403
    assert r.json["error"]["code"] == "SIGNUP_CLOSED"
    assert "octocat@example.com" in r.json["error"]["message"]
    assert browser.session_cookie() is None
    assert User.select().count() == 0


@pytest.mark.parametrize(
    "extra_env",
    [{"UPTIME_ALLOWED_EMAILS": "@example.com"}, {"UPTIME_ALLOWED_EMAILS": "octocat@example.com"}],
)
def test_sign_up_is_open_to_listed_addresses_and_domains(browser, providers):
    assert browser.sign_in("github", "octocat").status_code == 302
    assert User.get().email == "octocat@example.com"


@pytest.mark.parametrize("extra_env", [{"UPTIME_ALLOWED_EMAILS": ""}])
def test_without_a_list_only_the_first_account_signs_up(browser, new_browser, providers):
    assert browser.sign_in("github", "octocat").status_code == 302
    r = new_browser().sign_in("google", "gina")
    assert r.status_code == 403
    assert r.json["error"]["code"] == "SIGNUP_CLOSED"
    # The owner still signs in.
    assert new_browser().sign_in("github", "octocat").status_code == 302
    assert User.select().count() == 1


@pytest.mark.parametrize("extra_env", [{"UPTIME_ALLOWED_EMAILS": ""}])
def test_without_a_list_a_local_owner_closes_sign_up(alice, new_browser, providers):
    r = new_browser().sign_in("github", "octocat")
    assert r.status_code == 403
    assert r.json["error"]["code"] == "SIGNUP_CLOSED"
