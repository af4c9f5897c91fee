"""Provider configuration: built-in endpoints, generic providers, bad config."""

from __future__ import annotations

import pytest

from uptime_server.auth.provider_spec import (
    GITHUB_AUTHORIZE_URL,
    GITHUB_TOKEN_URL,
    GITHUB_USER_URL,
    GOOGLE_METADATA_URL,
    provider_spec,
)
from uptime_server.config import ConfigError, load_settings

BASE = {"UPTIME_DATA_DIR": "/tmp/uptime-test", "UPTIME_SECRET_KEY": "k"}


def _settings(**env: str):
    return load_settings({**BASE, **env})


def oauth_env(provider: str, **fields: str) -> dict[str, str]:
    """One provider's ``UPTIME_OAUTH_<PROVIDER>_<FIELD>`` settings, from lower-case field names."""
    return {f"UPTIME_OAUTH_{provider.upper()}_{name.upper()}": v for name, v in fields.items()}


def test_github_has_built_in_endpoints():
    spec = provider_spec(_settings(UPTIME_OAUTH_GITHUB_CLIENT_ID="id"), "github")
    assert (spec.kind, spec.authorize_url, spec.token_url, spec.userinfo_url) == (
        "github",
        GITHUB_AUTHORIZE_URL,
        GITHUB_TOKEN_URL,
        GITHUB_USER_URL,
    )
    assert spec.scopes == "read:user user:email"


def test_google_is_oidc_through_its_discovery_document():
    spec = provider_spec(_settings(UPTIME_OAUTH_GOOGLE_CLIENT_ID="id"), "google")
    assert (spec.kind, spec.metadata_url, spec.scopes) == (
        "oidc",
        GOOGLE_METADATA_URL,
        "openid email profile",
    )


def test_a_generic_provider_is_oidc_with_a_metadata_url_else_oauth2():
    settings = _settings(
        **oauth_env(
            "kc", client_id="id", metadata_url="https://kc.example/.well-known/openid-configuration"
        ),
        **oauth_env(
            "gl",
            client_id="id",
            authorize_url="https://gl.example/oauth/authorize",
            token_url="https://gl.example/oauth/token",
            userinfo_url="https://gl.example/api/v4/user",
            scopes="read_user",
        ),
    )
    assert provider_spec(settings, "kc").kind == "oidc"
    gitlab = provider_spec(settings, "gl")
    assert (gitlab.kind, gitlab.scopes) == ("oauth2", "read_user")
    assert provider_spec(settings, "nope") is None


def test_a_generic_provider_without_endpoints_is_a_config_error():
    with pytest.raises(ConfigError, match="UPTIME_OAUTH_ACME_"):
        _settings(
            **oauth_env("acme", client_id="id", authorize_url="https://acme.example/authorize")
        )


def test_secrets_post_for_github_basic_elsewhere():
    settings = _settings(
        **oauth_env("github", client_id="id", client_secret="s"),
        **oauth_env("google", client_id="id", client_secret="s"),
    )
    assert provider_spec(settings, "github").token_auth_method == "client_secret_post"
    assert provider_spec(settings, "google").token_auth_method == "client_secret_basic"
