"""The CLI hand-off (RFC 8252 loopback): ticket in the redirect, session in a body."""

from __future__ import annotations

import secrets

import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.auth.browser import query
from uptime_server.auth.login_state import sha256
from uptime_server.models import CliTicket, Session

LOOPBACK = "http://127.0.0.1:53682/callback"
EXCHANGE = "/api/v1/auth/cli/exchange"


class Cli:
    """The command line's half: a verifier, and a ticket caught on loopback."""

    def __init__(self, browser, redirect: str = LOOPBACK) -> None:
        self.browser = browser
        self.redirect = redirect
        self.verifier = secrets.token_urlsafe(48)

    def sign_in(self, provider: str, login: str):
        return self.browser.sign_in(
            provider,
            login,
            cli_redirect=self.redirect,
            cli_challenge=create_s256_code_challenge(self.verifier),
        )

    def ticket(self, provider: str = "github", login: str = "octocat") -> str:
        r = self.sign_in(provider, login)
        assert r.status_code == 302, r.get_data(as_text=True)
        assert r.headers["Location"].startswith(self.redirect.split("?")[0] + "?")
        return query(r.headers["Location"])["ticket"]

    def exchange(self, ticket: str, verifier: str | None = None):
        body = {"ticket": ticket, "verifier": verifier or self.verifier}
        return self.browser.client.post(EXCHANGE, json=body)


def test_the_cli_gets_a_session_in_the_exchange_body(browser, new_browser, providers, settings):
    cli = Cli(browser)
    r = cli.sign_in("github", "octocat")
    location = r.headers["Location"]
    ticket = query(location)["ticket"]
    # The browser gets no session: the sign-in is for the CLI.
    assert browser.session_cookie() is None
    assert CliTicket.get().ticket_hash == sha256(ticket)

    r = cli.exchange(ticket)
    assert r.status_code == 200, r.json
    data = r.json["data"]
    assert data["expires_at"] == "2026-12-06T12:00:00Z"
    assert data["user"]["email"] == "octocat@example.com"
    assert data["user"]["provider"] == "github"
    assert set(data["user"]) == {
        "team",
        "role",
        "id",
        "email",
        "name",
        "provider",
        "avatar_url",
        "created_at",
        "last_login",
        "is_admin",
    }
    assert data["session"] not in location
    assert r.headers["Cache-Control"] == "no-store"

    terminal = new_browser().client
    terminal.set_cookie("session_cookie", data["session"])
    me = terminal.get("/api/v1/auth/user")
    assert me.status_code == 200
    assert me.json["data"]["provider"] == "github"


def test_a_ticket_works_once(browser, providers):
    cli = Cli(browser)
    ticket = cli.ticket()
    assert cli.exchange(ticket).status_code == 200
    r = cli.exchange(ticket)
    assert r.status_code == 400
    assert r.json["error"]["code"] == "OAUTH_ERROR"
    assert Session.select().count() == 1


def test_a_wrong_verifier_burns_the_ticket(browser, providers):
    cli = Cli(browser)
    ticket = cli.ticket()
    r = cli.exchange(ticket, verifier=secrets.token_urlsafe(48))
    assert r.status_code == 400
    assert r.json["error"]["code"] == "OAUTH_ERROR"
    assert cli.exchange(ticket).status_code == 400
    assert Session.select().count() == 0


def test_a_ticket_expires_after_two_minutes(browser, providers, clock):
    cli = Cli(browser)
    ticket = cli.ticket()
    clock.advance(121)
    r = cli.exchange(ticket)
    assert r.status_code == 400
    assert r.json["error"]["code"] == "OAUTH_ERROR"


def test_a_ticket_is_good_just_before_it_expires(browser, providers, clock):
    cli = Cli(browser)
    ticket = cli.ticket()
    clock.advance(119)
    assert cli.exchange(ticket).status_code == 200


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "redirect", ["http://[::1]:40000/done", "http://localhost:40000/cb?port=40000"]
)
def test_other_loopback_forms_keep_their_path_and_query(browser, providers, redirect):
    cli = Cli(browser, redirect)
    r = cli.sign_in("google", "gina")
    location = r.headers["Location"]
    assert location.startswith(redirect.split("?")[0] + "?")
    if "port=" in redirect:
        assert query(location)["port"] == "40000"
    assert cli.exchange(query(location)["ticket"]).status_code == 200


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_failed_sign_in_is_reported_to_the_waiting_cli(browser, providers):
    providers.github_user("ghost", 7, emails=[])
    r = Cli(browser).sign_in("github", "ghost")
    assert r.status_code == 302
    params = query(r.headers["Location"])
    assert r.headers["Location"].startswith(LOOPBACK + "?")
    assert params["error"] == "SIGNUP_CLOSED"
    assert "ticket" not in params
    assert CliTicket.select().count() == 0


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ticket": "t"}, "verifier"),
        ({"verifier": "v" * 43}, "ticket"),
        ({"ticket": "t", "verifier": "short"}, "verifier"),
        ({"ticket": 5, "verifier": "v" * 43}, "ticket"),
        (["ticket", "verifier"], "body"),
    ],
)
def test_the_exchange_body_is_validated(anon, body, field):
    r = anon.post(EXCHANGE, json=body)
    assert r.status_code == 400
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
    assert field in r.json["error"]["details"]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_unknown_ticket_is_refused(anon):
    r = anon.post(EXCHANGE, json={"ticket": "made-up", "verifier": "v" * 43})
    assert r.status_code == 400
    assert r.json["error"]["code"] == "OAUTH_ERROR"
