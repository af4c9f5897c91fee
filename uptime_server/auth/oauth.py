"""OAuth2 and OpenID Connect providers, through Authlib's Flask client.

Three kinds of provider:
- ``github``: OAuth2; the profile comes from its REST API (``/user``, and
  ``/user/emails`` for the verified primary address);
- ``oidc``: ``google`` and any provider with a discovery document; the user
  is the ``sub`` of an id_token whose signature, ``iss``, ``aud``, ``exp`` and
  ``nonce`` are checked;
- ``oauth2``: any other provider, by its authorize, token and userinfo URLs.

Authlib's client builds the authorization URL, exchanges the code, checks the
id_token and fetches profiles. The state, PKCE verifier and nonce are ours
(``login_state``), kept in the database rather than in Authlib's
cookie-session store. The provider's access token lives only as long as the
callback request: nothing here stores it.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.flask_client import OAuth
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from flask import current_app
from joserfc.errors import JoseError

from uptime_server.auth.provider_profiles import (
    Profile,
    github_profile,
    oauth2_profile,
    oidc_profile,
)
from uptime_server.auth.provider_spec import ProviderSpec
from uptime_server.errors import ApiError

log = logging.getLogger(__name__)

# Every call to a provider gives up after this many seconds.
PROVIDER_TIMEOUT = 10

# What can go wrong talking to a provider: HTTP failures, OAuth error
# answers, bad JSON, and id_tokens that fail their checks.
PROVIDER_FAILURES = (
    AuthlibBaseError,
    JoseError,
    requests.RequestException,
    ValueError,
    KeyError,
    TypeError,
    RuntimeError,
)

_registry_lock = threading.Lock()
# Each app's Authlib clients, registered at a provider's first sign-in (tests make many apps).
_registries: weakref.WeakKeyDictionary[Any, OAuth] = weakref.WeakKeyDictionary()


def authorization_url(
    spec: ProviderSpec, *, redirect_uri: str, state: str, verifier: str, nonce: str | None
) -> str:
    """The provider's consent-screen URL for one sign-in (PKCE S256 always)."""
    extra: dict[str, str] = {}
    if nonce:
        extra["nonce"] = nonce
    try:
        # The challenge is passed in ready-made: given a verifier, Authlib
        # would log it at DEBUG.
        built = _client(spec).create_authorization_url(
            redirect_uri,
            state=state,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            **extra,
        )
    except PROVIDER_FAILURES as exc:
        raise _failure(spec, "could not start the sign-in", exc) from None
    return str(built["url"])


def fetch_profile(
    spec: ProviderSpec, *, code: str, redirect_uri: str, verifier: str, nonce: str | None
) -> Profile:
    """Exchange *code* for a token and read who signed in; the token is dropped."""
    client = _client(spec)
    try:
        token = client.fetch_access_token(
            redirect_uri=redirect_uri, code=code, code_verifier=verifier
        )
    except PROVIDER_FAILURES as exc:
        raise _failure(spec, "the token exchange failed", exc) from None
    try:
        if spec.kind == "github":
            return github_profile(client, spec, token)
        if spec.is_oidc:
            return oidc_profile(client, spec, token, nonce or "")
        return oauth2_profile(client, spec, token)
    except PROVIDER_FAILURES as exc:
        raise _failure(spec, "the provider's answer could not be verified", exc) from None


def _failure(spec: ProviderSpec, what: str, exc: BaseException) -> ApiError:
    reason = _reason(exc)
    # The reason names an error code or a check, never a code or token value.
    log.warning("sign-in with %s: %s: %s", spec.name, what, reason)
    return ApiError(
        "OAUTH_ERROR",
        f"Sign-in with {spec.name} failed: {what}",
        {"provider": [spec.name], "reason": [reason]},
    )


def _reason(exc: BaseException) -> str:
    error = getattr(exc, "error", None)
    description = getattr(exc, "description", None)
    if isinstance(error, str) and error:
        return f"{error}: {description}" if description else error
    if isinstance(exc, requests.RequestException):
        return type(exc).__name__
    return f"{type(exc).__name__}: {exc}"[:300]


def _client(spec: ProviderSpec) -> Any:
    """This app's Authlib client for *spec*, registered on first use."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    with _registry_lock:
        registry = _registries.get(app)
        if registry is None:
            registry = _registries[app] = OAuth(app)
        client = registry.create_client(spec.name)
        if client is None:
            client = registry.register(spec.name, **_client_config(spec))
    return client


def _client_config(spec: ProviderSpec) -> dict[str, Any]:
    config: dict[str, Any] = {
        "client_id": spec.client_id,
        "client_secret": spec.client_secret,
        "client_kwargs": {
            "scope": spec.scopes,
            "token_endpoint_auth_method": spec.token_auth_method,
            "default_timeout": PROVIDER_TIMEOUT,
        },
    }
    if spec.metadata_url:
        config["server_metadata_url"] = spec.metadata_url
    if spec.authorize_url:
        config["authorize_url"] = spec.authorize_url
    if spec.token_url:
        config["access_token_url"] = spec.token_url
    return config
