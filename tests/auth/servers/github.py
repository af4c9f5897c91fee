"""A small server that speaks GitHub's OAuth app endpoints, for tests.

``/login/oauth/authorize`` (a login form: POST ``login=<name>``),
``/login/oauth/access_token`` (client credentials as form fields, PKCE S256
checked, JSON with ``Accept: application/json``; errors come back as HTTP 200
with an ``error`` field, as GitHub does), ``/user`` and ``/user/emails``
(Bearer token). Users, the OAuth app and issued secrets are steered through
``/_test/*``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import urlencode

from flask import Flask, jsonify, redirect, request


@dataclass
class GitHubUser:
    login: str
    id: int
    name: str | None
    public_email: str | None
    emails: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Grant:
    login: str
    client_id: str
    redirect_uri: str
    challenge: str | None
    expires: float


class GitHubStore:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.apps: dict[str, tuple[str, str]] = {}  # client_id -> (secret, callback)
        self.users: dict[str, GitHubUser] = {}
        self.codes: dict[str, Grant] = {}
        self.tokens: dict[str, str] = {}  # access token -> login
        self.issued: list[str] = []


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def create_app(store: GitHubStore) -> Flask:
    app = Flask("test_github_server")
    _oauth_routes(app, store)
    _api_routes(app, store)
    _control_routes(app, store)
    return app


def _oauth_routes(app: Flask, store: GitHubStore) -> None:
    @app.route("/login/oauth/authorize", methods=["GET", "POST"])
    def authorize() -> Any:
        args = request.args
        registered = store.apps.get(args.get("client_id", ""))
        if registered is None or args.get("redirect_uri") != registered[1]:
            return "The redirect_uri is not associated with this application.", 400
        if request.method == "GET":
            return _login_form(), 200
        if request.form.get("consent") == "deny":
            return _back(args, error="access_denied")
        user = store.users.get(request.form.get("login", ""))
        if user is None:
            return _login_form(), 400
        code = secrets.token_hex(10)
        with store.lock:
            store.codes[code] = Grant(
                login=user.login,
                client_id=args["client_id"],
                redirect_uri=args["redirect_uri"],
                challenge=args.get("code_challenge")
                if args.get("code_challenge_method") == "S256"
                else None,
                expires=time.time() + 600,
            )
            store.issued.append(code)
        return _back(args, code=code)

    @app.post("/login/oauth/access_token")
    def access_token() -> Any:
        form = request.form
        registered = store.apps.get(form.get("client_id", ""))
        if registered is None or not hmac.compare_digest(
            registered[0].encode(), form.get("client_secret", "").encode()
        ):
            return _token_error("incorrect_client_credentials")
        with store.lock:
            grant = store.codes.pop(form.get("code", ""), None)
        if grant is None or grant.client_id != form["client_id"] or grant.expires < time.time():
            return _token_error("bad_verification_code")
        if form.get("redirect_uri") not in (None, grant.redirect_uri):
            return _token_error("redirect_uri_mismatch")
        verifier = form.get("code_verifier", "")
        if grant.challenge and not hmac.compare_digest(s256(verifier), grant.challenge):
            return _token_error("bad_verification_code", "The code_verifier does not match.")
        token = "gho_" + secrets.token_hex(18)
        with store.lock:
            store.tokens[token] = grant.login
            store.issued.append(token)
        if "application/json" in request.headers.get("Accept", ""):
            return jsonify(access_token=token, token_type="bearer", scope="read:user,user:email")
        return urlencode({"access_token": token, "token_type": "bearer"})


def _back(args: Any, **params: str) -> Any:
    if args.get("state"):
        params["state"] = args["state"]
    return redirect(f"{args['redirect_uri']}?{urlencode(params)}", code=302)


def _token_error(error: str, description: str | None = None) -> Any:
    return jsonify(error=error, error_description=description or error.replace("_", " "))


def _login_form() -> str:
    return (
        "<!doctype html><title>Sign in to GitHub</title>"
        f'<form method="post" action="{escape(request.full_path)}">'
        '<input name="login"><button name="consent" value="allow">Authorize</button>'
        '<button name="consent" value="deny">Cancel</button></form>'
    )


def _api_routes(app: Flask, store: GitHubStore) -> None:
    def bearer_user() -> GitHubUser | None:
        auth = request.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() not in ("bearer", "token"):
            return None
        login = store.tokens.get(token)
        return store.users.get(login) if login else None

    @app.get("/user")
    def user() -> Any:
        found = bearer_user()
        if found is None:
            return jsonify(message="Requires authentication"), 401
        return jsonify(
            login=found.login,
            id=found.id,
            name=found.name,
            email=found.public_email,
            avatar_url=f"https://avatars.githubusercontent.com/u/{found.id}",
        )

    @app.get("/user/emails")
    def emails() -> Any:
        found = bearer_user()
        if found is None:
            return jsonify(message="Requires authentication"), 401
        return jsonify(found.emails)


def _control_routes(app: Flask, store: GitHubStore) -> None:
    @app.post("/_test/reset")
    def reset() -> Any:
        with store.lock:
            store.reset()
        return jsonify(ok=True)

    @app.put("/_test/apps/<client_id>")
    def put_app(client_id: str) -> Any:
        body = request.get_json()
        store.apps[client_id] = (body["secret"], body["callback"])
        return jsonify(ok=True)

    @app.put("/_test/users/<login>")
    def put_user(login: str) -> Any:
        body = request.get_json()
        store.users[login] = GitHubUser(
            login=login,
            id=int(body["id"]),
            name=body.get("name"),
            public_email=body.get("email"),
            emails=body.get("emails", []),
        )
        return jsonify(ok=True)

    @app.get("/_test/issued")
    def issued() -> Any:
        return jsonify(issued=list(store.issued))
