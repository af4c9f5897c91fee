"""GET /: a minimal page confirming who is signed in."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def test_signed_out_it_offers_the_configured_providers(anon, providers):
    r = anon.get("/")
    assert r.status_code == 200
    assert r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    for name in ("github", "google", "corp"):
        assert f'href="/api/v1/auth/{name}/login"' in page
    assert "uptime login" in page


def test_signed_in_it_shows_the_user_and_the_api_document(make_user):
    user = make_user("eve@example.com", "<b>Eve</b>")
    page = user.get("/").get_data(as_text=True)
    assert "eve@example.com" in page
    assert "&lt;b&gt;Eve&lt;/b&gt;" in page
    assert "<b>Eve</b>" not in page
    assert 'href="/api/v1/openapi.json"' in page


def test_after_a_sign_in_the_browser_lands_on_it(browser, providers):
    r = browser.sign_in("github", "octocat")
    page = browser.client.get(r.headers["Location"]).get_data(as_text=True)
    assert "octocat@example.com" in page
    assert "with github" in page
