"""No secret reaches a log, and provider tokens are not kept.

The logs of complete sign-ins (browser and CLI, three providers, and two
failures) are captured at DEBUG, including the werkzeug, authlib, urllib3 and
requests loggers, then searched for every secret involved: client secrets,
authorization codes, access and id tokens, PKCE verifiers, nonces, tickets
and session tokens.
"""

from __future__ import annotations

import logging
import secrets

from authlib.oauth2.rfc7636 import create_s256_code_challenge

from tests.auth.browser import query
from tests.auth.conftest import CORP_SECRET, GITHUB_SECRET, GOOGLE_SECRET
from uptime_server.auth.login_state import COOKIE_NAME, pkce_verifier, sha256
from uptime_server.models import CliTicket, Identity, OAuthState, Session, User

SECRET_KEY = "test-secret-key"  # tests/conftest.py settings_env
LOGGERS = ("", "werkzeug", "authlib", "urllib3", "requests", "uptime_server", "flask_limiter")


def _sign_in(browser, provider: str, login: str, seen: list[str], **params: str):
    authorize = browser.login(provider, **params)
    seen.append(pkce_verifier(query(authorize)["state"], SECRET_KEY))
    callback = browser.approve(authorize, login)
    seen.append(query(callback)["code"])
    response = browser.callback(callback)
    for name in ("session_cookie", COOKIE_NAME):
        cookie = browser.client.get_cookie(
            name, path="/api/v1/auth" if name == COOKIE_NAME else "/"
        )
        if cookie:
            seen.append(cookie.value)
    return response


def _run_sign_ins(new_browser, providers) -> list[str]:
    seen = [GITHUB_SECRET, GOOGLE_SECRET, CORP_SECRET]
    # Another person at corp: gina's address holds an account already.
    providers.oidc_user("carl", "108234987561230002", "carl@example.com")
    for provider, login in (("github", "octocat"), ("google", "gina"), ("corp", "carl")):
        assert _sign_in(new_browser(), provider, login, seen).status_code == 302
    verifier = secrets.token_urlsafe(48)
    cli = new_browser()
    r = _sign_in(
        cli,
        "github",
        "octocat",
        seen,
        cli_redirect="http://127.0.0.1:53682/cb",
        cli_challenge=create_s256_code_challenge(verifier),
    )
    ticket = query(r.headers["Location"])["ticket"]
    exchanged = cli.client.post(
        "/api/v1/auth/cli/exchange", json={"ticket": ticket, "verifier": verifier}
    )
    assert exchanged.status_code == 200
    seen += [ticket, verifier, exchanged.json["data"]["session"]]
    # Failures log warnings: they must be as clean.
    providers.faults(aud="someone-else")
    assert _sign_in(new_browser(), "google", "gina", seen).status_code == 400
    return seen


def test_no_secret_reaches_a_log(new_browser, providers, caplog):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    seen = _run_sign_ins(new_browser, providers)
    seen += providers.issued()
    # (Nonces are left out: they travel in the authorization URL by design.)

    messages = [r.getMessage() for r in caplog.records]
    text = "\n".join(messages) + "\n" + caplog.text
    # The capture did see the HTTP traffic and the sign-ins themselves.
    assert any(r.name.startswith("urllib3") and "/token" in r.getMessage() for r in caplog.records)
    assert any("signed in with github" in m for m in messages)
    assert any("sign-in with google" in m and "'aud'" in m for m in messages)
    leaked = [s[:8] + "…" for s in seen if s in text]
    assert not leaked, f"secrets in the logs: {leaked}"


def test_provider_tokens_are_not_kept(new_browser, providers):
    _run_sign_ins(new_browser, providers)
    tokens = [t for t in providers.issued() if t.startswith("gho_") or t.count(".") == 2]
    assert tokens
    stored = []
    for model in (User, Identity, Session, OAuthState, CliTicket):
        for row in model.select().dicts():
            stored += [str(value) for value in row.values()]
    dump = "\n".join(stored)
    assert not [t for t in tokens if t in dump]
    # What is kept of sessions and tickets is their hash.
    assert all(len(row.token_hash) == 64 for row in Session.select())
    assert all(row.ticket_hash != sha256("") for row in CliTicket.select())
