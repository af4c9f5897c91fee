"""A real OpenID Connect / OAuth2 authorization server for tests, built from
Authlib's server components (authorization code grant, PKCE required with
S256, OpenID Connect id_tokens signed RS256, discovery, JWKS, userinfo).

It plays Google (through discovery) and the generic providers. Its "dev
interaction" is a login form: POST ``login=<name>`` (and ``consent=deny`` to
refuse). Tests steer it through ``/_test/*``: clients, users, and faults that
make it issue id_tokens with a wrong audience, issuer, nonce, expiry or
signature, so the relying party's checks are exercised against real tokens.
"""

from __future__ import annotations

import hmac
import threading
import time
from dataclasses import dataclass, field
from html import escape
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, InvalidRequestError
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, jsonify, request
from joserfc.jwk import RSAKey

SIGNING_KID = "test-key-1"


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str
    redirect_uris: list[str]

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uris[0]

    def get_allowed_scope(self, scope: str) -> str:
        return scope or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return hmac.compare_digest(client_secret.encode(), self.client_secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    login: str
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    auth_time: int = field(default_factory=lambda: int(time.time()))

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> str | None:
        return self.nonce

    def get_auth_time(self) -> int:
        return self.auth_time

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


@dataclass
class User:
    login: str
    sub: str
    email: str | None
    email_verified: bool | None  # None: the claim is left out
    name: str


class Store:
    """Everything the server knows; the Flask app and grants share it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key = RSAKey.generate_key(2048, parameters={"kid": SIGNING_KID, "use": "sig"})
        # Same kid, different key: a token signed with it must fail the check.
        self.rogue_key = RSAKey.generate_key(2048, parameters={"kid": SIGNING_KID})
        self.reset()

    def reset(self) -> None:
        self.clients: dict[str, Client] = {}
        self.users: dict[str, User] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, tuple[User, str]] = {}
        self.faults: dict[str, Any] = {}
        # Every secret handed out, so tests can check none reached a log.
        self.issued: list[str] = []


class RequiredS256(CodeChallenge):
    """PKCE required for every client, S256 only."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge") or data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE with code_challenge_method=S256 is required")
        super().validate_code_challenge(grant, redirect_uri)


def create_app(store: Store) -> Flask:
    app = Flask("test_oidc_server")
    server = AuthorizationServer(
        app, query_client=lambda cid: store.clients.get(cid), save_token=_saver(store)
    )
    server.register_grant(_grant_class(store), [RequiredS256(required=True), _IdToken(store)])
    _routes(app, server, store)
    _control_routes(app, store)
    return app


def _saver(store: Store) -> Any:
    def save_token(token: dict[str, Any], req: Any) -> None:
        with store.lock:
            store.tokens[token["access_token"]] = (req.user, token.get("scope", ""))
            store.issued.append(token["access_token"])

    return save_token


def _grant_class(store: Store) -> type[AuthorizationCodeGrant]:
    class Grant(AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

        def save_authorization_code(self, code: str, req: Any) -> None:
            data = req.payload.data
            with store.lock:
                store.codes[code] = Code(
                    code=code,
                    client_id=req.client.client_id,
                    redirect_uri=req.payload.redirect_uri,
                    scope=req.scope or "",
                    login=req.user.login,
                    nonce=data.get("nonce"),
                    code_challenge=data.get("code_challenge"),
                    code_challenge_method=data.get("code_challenge_method"),
                )
                store.issued.append(code)

        def query_authorization_code(self, code: str, client: Client) -> Code | None:
            item = store.codes.get(code)
            return item if item and item.client_id == client.client_id else None

        def delete_authorization_code(self, item: Code) -> None:
            store.codes.pop(item.code, None)

        def authenticate_user(self, item: Code) -> User | None:
            return store.users.get(item.login)

    return Grant


class _IdToken(OpenIDCode):
    def __init__(self, store: Store) -> None:
        super().__init__(require_nonce=False)
        self.store = store

    def exists_nonce(self, nonce: str, req: Any) -> bool:
        return False

    def resolve_client_private_key(self, client: Client) -> RSAKey:
        rogue = self.store.faults.get("rogue_signature")
        return self.store.rogue_key if rogue else self.store.key

    def get_encode_header(self, client: Client) -> dict[str, str]:
        return {"alg": "RS256", "kid": SIGNING_KID}

    def get_client_claims(self, client: Client) -> dict[str, Any]:
        faults = self.store.faults
        claims: dict[str, Any] = {
            "iss": faults.get("iss") or request.host_url.rstrip("/"),
            "aud": faults.get("aud") or [client.get_client_id()],
        }
        if "exp_offset" in faults:
            claims["exp"] = int(time.time()) + int(faults["exp_offset"])
            claims["iat"] = claims["exp"] - 3600
        return claims

    def get_authorization_code_claims(self, code: Code) -> dict[str, Any]:
        claims = super().get_authorization_code_claims(code)
        if "nonce" in self.store.faults:
            claims["nonce"] = self.store.faults["nonce"]
        return claims

    def generate_user_info(self, user: User, scope: str) -> UserInfo:
        if self.store.faults.get("lean_id_token"):
            # Some providers put only the subject in the id_token.
            return UserInfo(sub=user.sub)
        return user_info(user, scope)


def user_info(user: User, scope: str) -> UserInfo:
    scopes = scope.split()
    info = UserInfo(sub=user.sub)
    if "profile" in scopes:
        info["name"] = user.name
        info["picture"] = f"https://avatars.example/{user.login}.png"
    if "email" in scopes and user.email:
        info["email"] = user.email
        if user.email_verified is not None:
            info["email_verified"] = user.email_verified
    return info


def _routes(app: Flask, server: AuthorizationServer, store: Store) -> None:
    @app.get("/.well-known/openid-configuration")
    def discovery() -> Any:
        base = request.host_url.rstrip("/")
        return jsonify(
            issuer=base,
            authorization_endpoint=f"{base}/authorize",
            token_endpoint=f"{base}/token",
            userinfo_endpoint=f"{base}/userinfo",
            jwks_uri=f"{base}/jwks",
            response_types_supported=["code"],
            subject_types_supported=["public"],
            id_token_signing_alg_values_supported=["RS256"],
            code_challenge_methods_supported=["S256"],
            token_endpoint_auth_methods_supported=["client_secret_basic", "client_secret_post"],
        )

    @app.get("/jwks")
    def jwks() -> Any:
        return jsonify(keys=[store.key.as_dict(private=False)])

    @app.route("/authorize", methods=["GET", "POST"])
    def authorize() -> Any:
        user = store.users.get(request.form.get("login", "")) if request.method == "POST" else None
        try:
            grant = server.get_consent_grant(end_user=user)
        except OAuth2Error as error:
            return jsonify(error=error.error, error_description=error.description), 400
        if request.method == "GET" or (user is None and request.form.get("consent") != "deny"):
            return _login_form(), 200 if request.method == "GET" else 400
        granted = None if request.form.get("consent") == "deny" else user
        return server.create_authorization_response(grant_user=granted, grant=grant)

    @app.post("/token")
    def token() -> Any:
        response = server.create_token_response()
        id_token = (response.get_json(silent=True) or {}).get("id_token")
        if id_token:
            store.issued.append(id_token)
        return response

    @app.get("/userinfo")
    def userinfo() -> Any:
        auth = request.headers.get("Authorization", "")
        found = store.tokens.get(auth[7:]) if auth.startswith("Bearer ") else None
        if found is None:
            return jsonify(error="invalid_token"), 401
        user, scope = found
        info = dict(user_info(user, scope))
        if "userinfo_sub" in store.faults:
            info["sub"] = store.faults["userinfo_sub"]
        return jsonify(info)


def _login_form() -> str:
    return (
        "<!doctype html><title>Sign in</title>"
        f'<form method="post" action="{escape(request.full_path)}">'
        '<input name="login"><button name="consent" value="allow">Allow</button>'
        '<button name="consent" value="deny">Deny</button></form>'
    )


def _control_routes(app: Flask, store: Store) -> None:
    @app.post("/_test/reset")
    def reset() -> Any:
        with store.lock:
            store.reset()
        return jsonify(ok=True)

    @app.put("/_test/clients/<client_id>")
    def put_client(client_id: str) -> Any:
        body = request.get_json()
        store.clients[client_id] = Client(client_id, body["secret"], body["redirect_uris"])
        return jsonify(ok=True)

    @app.put("/_test/users/<login>")
    def put_user(login: str) -> Any:
        body = request.get_json()
        store.users[login] = User(
            login=login,
            sub=body["sub"],
            email=body.get("email"),
            email_verified=body.get("email_verified", True),
            name=body.get("name", login),
        )
        return jsonify(ok=True)

    @app.put("/_test/faults")
    def put_faults() -> Any:
        store.faults = request.get_json()
        return jsonify(ok=True)

    @app.get("/_test/issued")
    def issued() -> Any:
        return jsonify(issued=list(store.issued))
