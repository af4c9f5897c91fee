"""The invitation page /invite/{token}: signed out, signed in, accepting by POST."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from tests.api.invites import invite, new_team


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {
        **settings_env,
        "UPTIME_OAUTH_GITHUB_CLIENT_ID": "gh-client",
        "UPTIME_OAUTH_GITHUB_CLIENT_SECRET": "gh-secret",
    }


@pytest.fixture
def token(alice: Any, settings: Any, clock: Any) -> str:
    team = new_team(alice)
    _, token = invite(alice, team, settings, clock, email="carol@elsewhere.example", role="admin")
    return token


def role_of(user: Any, team: str = "ops") -> str | None:
    response = user.get(f"/api/v1/teams/{team}")
    return response.get_json()["data"]["role"] if response.status_code == 200 else None


def test_signed_out_it_names_the_team_and_offers_sign_in_and_the_cli(anon, token):
    response = anon.get(f"/invite/{token}")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "<strong>Alice</strong> invited you to the team" in page
    assert "<strong>Ops</strong> as <strong>admin</strong>" in page
    assert "2026-11-29 12:00 UTC" in page
    login = f"/api/v1/auth/github/login?next={quote(f'/invite/{token}', safe='/')}"
    assert f'href="{login}"' in page
    assert f"uptime teams join {token}" in page
    assert "<form" not in page
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "form-action 'self'" in response.headers["Content-Security-Policy"]


def test_the_sign_in_link_brings_the_browser_back_to_the_page(anon, token):
    login = anon.get(f"/api/v1/auth/github/login?next=/invite/{token}")

    assert login.status_code == 302
    assert login.headers["Location"].startswith("https://github.com/login/oauth/authorize")


def test_signed_in_it_shows_a_button_that_posts_to_the_same_url(bob, token):
    page = bob.get(f"/invite/{token}").get_data(as_text=True)

    assert f'<form method="post" action="/invite/{token}">' in page
    assert "Join Ops</button>" in page
    assert "Bob" in page
    assert "Sign in with" not in page


def test_the_button_joins_and_goes_home(bob, token, settings):
    response = bob.post(f"/invite/{token}", headers={"Origin": settings.base_url})

    assert response.status_code == 303
    assert response.headers["Location"] == "/"
    assert role_of(bob) == "admin"
    again = bob.post(f"/invite/{token}", headers={"Origin": settings.base_url})
    assert again.status_code == 404
    assert bob.get(f"/invite/{token}").status_code == 404


def test_a_referer_of_this_site_is_enough(bob, token, settings):
    response = bob.post(f"/invite/{token}", headers={"Referer": f"{settings.base_url}/invite/x"})

    assert response.status_code == 303
    assert role_of(bob) == "admin"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Referer": "https://evil.example/"},
    ],
)
def test_a_post_from_elsewhere_is_refused_and_uses_nothing(bob, token, settings, headers):
    response = bob.post(f"/invite/{token}", headers=headers)

    assert response.status_code == 403
    assert role_of(bob) is None
    assert bob.get(f"/invite/{token}").status_code == 200  # still pending


def test_a_signed_out_post_goes_back_to_the_page(anon, token, settings):
    response = anon.post(f"/invite/{token}", headers={"Origin": settings.base_url})

    assert response.status_code == 303
    assert response.headers["Location"] == f"/invite/{token}"


def test_an_unknown_or_expired_token_is_a_404_page(anon, bob, token, clock, settings):
    unknown = anon.get("/invite/" + "x" * 43)
    assert unknown.status_code == 404 and unknown.mimetype == "text/html"
    assert "Invitation not found" in unknown.get_data(as_text=True)
    assert anon.get("/invite/" + "x" * 500).status_code == 404

    clock.advance(7 * 86400)

    assert anon.get(f"/invite/{token}").status_code == 404
    assert bob.post(f"/invite/{token}", headers={"Origin": settings.base_url}).status_code == 404
    assert role_of(bob) is None
