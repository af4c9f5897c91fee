"""Admin rights follow the account, not an address (issue 29, item 3).

UPTIME_ADMINS grants ``is_admin`` at sign-in only for an address the provider
asserted as verified and that no other account holds; a sign-up with an
address another account holds makes no second account. Real providers on
loopback (tests/auth/servers): the OIDC server leaves ``email_verified`` out
when told to, the GitHub-like one says ``verified`` per address in
``/user/emails``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.api.shapes import assert_error
from tests.auth.browser import Browser
from uptime_server.auth import admins
from uptime_server.auth.local_users import mint_local_session
from uptime_server.models import Identity, User

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)

BOSS = "boss@example.com"
ADMINS = {"UPTIME_ADMINS": BOSS, "UPTIME_LOCATIONS": "local,eu-west"}


def me(browser: Browser) -> dict:
    r = browser.client.get("/api/v1/auth/user")
    assert r.status_code == 200, r.json
    return r.json["data"]


def may_manage_agents(browser: Browser) -> bool:
    status = browser.client.get("/api/v1/agents").status_code
    assert status in (200, 403)
    return status == 200


# -- the bootstrap: which sign-ins UPTIME_ADMINS makes admins ------------------------------


@pytest.mark.parametrize("extra_env", [ADMINS])
@pytest.mark.parametrize("provider", ["okta", "corp"])  # OIDC id_token; OAuth2 userinfo
def test_an_address_without_email_verified_is_no_admin(browser, providers, provider):
    providers.oidc_user("boss", "9001", BOSS, verified=None)

    assert browser.sign_in(provider, "boss").status_code == 302

    assert not may_manage_agents(browser)
    user = me(browser)
    assert user["email"] == BOSS  # signed up, as before
    assert user["is_admin"] is False


@pytest.mark.parametrize("extra_env", [ADMINS])
@pytest.mark.parametrize("provider", ["okta", "corp", "google"])
def test_an_address_the_provider_verified_makes_an_admin(browser, providers, provider):
    providers.oidc_user("boss", "9001", BOSS, verified=True)

    assert browser.sign_in(provider, "boss").status_code == 302

    assert me(browser)["is_admin"] is True
    assert may_manage_agents(browser)


@pytest.mark.parametrize("extra_env", [{**ADMINS, "UPTIME_ADMINS": "gina@example.com"}])
def test_a_verified_address_that_is_not_listed_makes_no_admin(browser, new_browser, providers):
    assert browser.sign_in("okta", "gina").status_code == 302
    assert me(browser)["is_admin"] is True
    other = new_browser()
    providers.github_user(
        "octo", 12, emails=[{"email": "octo@example.com", "primary": True, "verified": True}]
    )
    assert other.sign_in("github", "octo").status_code == 302
    assert me(other)["is_admin"] is False


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_github_emails_verified_flag_makes_an_admin(browser, providers):
    providers.github_user(
        "boss", 77, emails=[{"email": BOSS, "primary": True, "verified": True}], name="Boss"
    )
    assert browser.sign_in("github", "boss").status_code == 302
    assert me(browser)["is_admin"] is True


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_a_github_public_address_that_emails_calls_unverified_vouches_for_nothing(
    browser, providers
):
    """GitHub's /user shows a public address; only /user/emails says whether it is verified."""
    providers.github_user(
        "poser",
        78,
        email=BOSS,
        emails=[
            {"email": "poser@example.com", "primary": True, "verified": True},
            {"email": BOSS, "primary": False, "verified": False},
        ],
    )
    assert browser.sign_in("github", "poser").status_code == 302
    assert not may_manage_agents(browser)
    assert not admins.holders(BOSS)
    user = me(browser)
    assert (user["email"], user["is_admin"]) == ("poser@example.com", False)


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_the_address_held_by_another_account_makes_no_admin(browser, providers, settings):
    """Two accounts already share the address (made before this rule): neither gets
    the flag from it; `uptime server admin grant USER_ID` decides."""
    now = datetime.now(UTC)
    User.create(email=BOSS.upper(), name="older", created_at=now)
    mine = User.create(email=BOSS, name="boss", created_at=now)
    Identity.create(user=mine, provider="okta", subject="9001", email=BOSS, created_at=now)
    providers.oidc_user("boss", "9001", BOSS, verified=True)

    assert browser.sign_in("okta", "boss").status_code == 302

    assert me(browser)["id"] == mine.id
    assert me(browser)["is_admin"] is False
    assert admins.list_admins() == []


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_the_flag_stays_when_the_address_leaves_the_list(browser, providers, settings):
    providers.oidc_user("boss", "9001", BOSS, verified=True)
    assert browser.sign_in("okta", "boss").status_code == 302
    assert me(browser)["is_admin"] is True
    # The bootstrap grants; only `uptime server admin revoke` takes away.
    assert browser.sign_in("okta", "boss").status_code == 302
    assert me(browser)["is_admin"] is True


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_a_local_session_counts_as_verified_unless_a_provider_signs_into_the_account(
    providers, settings, clock, new_browser
):
    mint_local_session(settings, email=BOSS, clock=clock)
    assert User.get(User.email == BOSS).is_admin is True

    # An account a provider signs into: its address is whatever that provider
    # account said, so a local session for it grants nothing.
    providers.oidc_user("posing", "9002", "boss2@example.com", verified=None)
    browser = new_browser()
    assert browser.sign_in("okta", "posing").status_code == 302
    settings_two = settings.with_overrides(admins=("boss2@example.com",))
    mint_local_session(settings_two, email="boss2@example.com", clock=clock)
    assert me(browser)["is_admin"] is False


# -- one account per address ---------------------------------------------------------------


@pytest.mark.parametrize("extra_env", [ADMINS])
@pytest.mark.parametrize(
    ("provider", "login", "address", "verified"),
    [
        ("github", "octo-gina", "gina@example.com", True),
        ("okta", "gina-elsewhere", "gina@example.com", None),
        ("okta", "gina-elsewhere", "GINA@Example.com", True),
    ],
)
def test_a_sign_up_with_an_address_another_account_holds_is_refused(
    browser, new_browser, providers, provider, login, address, verified
):
    assert browser.sign_in("google", "gina").status_code == 302
    gina = me(browser)["id"]
    if provider == "github":
        providers.github_user(
            login, 4711, emails=[{"email": address, "primary": True, "verified": verified}]
        )
    else:
        providers.oidc_user(login, "4711", address, verified=verified)

    other = new_browser()
    r = other.sign_in(provider, login)

    error = assert_error(r, 409, "EMAIL_IN_USE", "email")
    assert "sign in with the provider you used before, then link" in error["message"]
    assert other.session_cookie() is None
    assert User.select().count() == 1
    assert not Identity.select().where(Identity.provider == provider).exists()
    # The way in: sign in as before, then link the other provider.
    assert browser.sign_in(provider, login).status_code == 302
    assert Identity.get(Identity.provider == provider).user_id == gina
    assert other.sign_in(provider, login).status_code == 302
    assert me(other)["id"] == gina


@pytest.mark.parametrize("extra_env", [ADMINS])
def test_the_admin_flag_is_shown_by_get_auth_user(alice, bob, providers):
    admins.set_admin(alice.user, True)
    assert alice.get("/api/v1/auth/user").json["data"]["is_admin"] is True
    assert bob.get("/api/v1/auth/user").json["data"]["is_admin"] is False
