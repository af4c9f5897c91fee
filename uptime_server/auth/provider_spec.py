"""A configured OAuth provider: its settings with the built-in defaults filled in.

Its own module because both the sign-in flow (``oauth``) and the profile
readers (``provider_profiles``) take a ``ProviderSpec``, and neither owns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from uptime_server.config import OAuthProvider, Settings

GITHUB_AUTHORIZE_URL = "https://github.com/login/oauth/authorize"
GITHUB_TOKEN_URL = "https://github.com/login/oauth/access_token"
GITHUB_USER_URL = "https://api.github.com/user"
GITHUB_SCOPES = "read:user user:email"
GOOGLE_METADATA_URL = "https://accounts.google.com/.well-known/openid-configuration"
OIDC_SCOPES = "openid email profile"


@dataclass(frozen=True)
class ProviderSpec:
    """A configured provider with its built-in defaults filled in."""

    name: str
    kind: str  # "github", "oidc" or "oauth2"
    client_id: str
    client_secret: str | None
    authorize_url: str | None
    token_url: str | None
    userinfo_url: str | None
    emails_url: str | None
    metadata_url: str | None
    scopes: str | None

    @property
    def is_oidc(self) -> bool:
        return self.kind == "oidc"

    @property
    def token_auth_method(self) -> str:
        if not self.client_secret:
            return "none"
        # GitHub documents the client credentials as form fields.
        return "client_secret_post" if self.kind == "github" else "client_secret_basic"


def provider_spec(settings: Settings, name: str) -> ProviderSpec | None:
    """The provider called *name*, or None when it is not configured."""
    conf = settings.oauth_providers.get(name)
    if conf is None or not conf.client_id:
        return None
    if name == "github":
        return _spec(
            conf,
            "github",
            authorize_url=conf.authorize_url or GITHUB_AUTHORIZE_URL,
            token_url=conf.token_url or GITHUB_TOKEN_URL,
            userinfo_url=conf.userinfo_url or GITHUB_USER_URL,
            scopes=conf.scopes or GITHUB_SCOPES,
        )
    if name == "google" or conf.metadata_url:
        return _spec(
            conf,
            "oidc",
            metadata_url=conf.metadata_url or GOOGLE_METADATA_URL,
            scopes=conf.scopes or OIDC_SCOPES,
        )
    return _spec(conf, "oauth2")


def _spec(conf: OAuthProvider, kind: str, **overrides: Any) -> ProviderSpec:
    values = {
        "authorize_url": conf.authorize_url,
        "token_url": conf.token_url,
        "userinfo_url": conf.userinfo_url,
        "emails_url": conf.emails_url,
        "metadata_url": conf.metadata_url,
        "scopes": conf.scopes,
    }
    values.update(overrides)
    return ProviderSpec(
        name=conf.name,
        kind=kind,
        client_id=conf.client_id,
        client_secret=conf.client_secret,
        **values,
    )
