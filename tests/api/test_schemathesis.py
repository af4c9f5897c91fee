"""The OpenAPI document is true: schemathesis against the app in WSGI mode.

Every operation of the document is exercised with generated requests, valid
and invalid (``test_every_operation_is_included`` keeps it so), signed in as
alice, who owns a few monitors and notifications. Each response is checked
for server errors and for conformance of status code, content type and body
schema to the document. SQLite only: this is about the API's contract, not
the database.

Nothing leaves the machine: "test now" runs through an offline probe (the
real Prober, whose fetch is refused before any socket exists), a channel's
test message through an offline sender (refused before any socket), and the
sign-in providers point at a closed port on 127.0.0.1 (login only builds
their URL; a callback never gets past the state check; google's discovery
document is fetched from that closed port and fails as OAUTH_ERROR).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.offline_channels import OfflineChannelSender
from tests.api.offline_probe import OfflineProber, offline_probe_loop
from tests.cli.conftest import closed_port
from uptime_server.api.openapi import build_document
from uptime_server.app import create_app
from uptime_server.config import load_settings
from uptime_server.engine.probe_loop import ProbeLoop

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
NOWHERE = f"http://127.0.0.1:{closed_port()}"

# The document as the test app serves it (test_openapi checks that the served
# document is this one). schemathesis.pytest.from_fixture, which would load
# it through the app, fails under pytest 9 ('Function' has no '_nodeid'), so
# the schema is built here and every call goes to the app in-process (WSGI).
DOCUMENT_ENV = {
    "UPTIME_DATA_DIR": "/nonexistent",
    "UPTIME_MIN_CHECK_INTERVAL": "1",
    "UPTIME_LOCATIONS": "local,eu-west",
}
DOCUMENT_SETTINGS = load_settings({**DOCUMENT_ENV, "UPTIME_SECRET_KEY": "document-only"})
DOCUMENT = build_document(DOCUMENT_SETTINGS, create_app(DOCUMENT_SETTINGS, bind_database=False))
schema = schemathesis.openapi.from_dict(DOCUMENT)

# Providers: github (OAuth2) and corp (generic OAuth2) answer login with a
# redirect; google (OIDC) cannot fetch its discovery document.
PROVIDER_ENV = {
    "UPTIME_OAUTH_GITHUB_CLIENT_ID": "gh-client",
    "UPTIME_OAUTH_GITHUB_CLIENT_SECRET": "gh-secret",
    "UPTIME_OAUTH_GITHUB_AUTHORIZE_URL": f"{NOWHERE}/authorize",
    "UPTIME_OAUTH_GITHUB_TOKEN_URL": f"{NOWHERE}/token",
    "UPTIME_OAUTH_GITHUB_USERINFO_URL": f"{NOWHERE}/user",
    "UPTIME_OAUTH_GOOGLE_CLIENT_ID": "google-client",
    "UPTIME_OAUTH_GOOGLE_CLIENT_SECRET": "google-secret",
    "UPTIME_OAUTH_GOOGLE_METADATA_URL": f"{NOWHERE}/.well-known/openid-configuration",
    "UPTIME_OAUTH_CORP_CLIENT_ID": "corp-client",
    "UPTIME_OAUTH_CORP_AUTHORIZE_URL": f"{NOWHERE}/authorize",
    "UPTIME_OAUTH_CORP_TOKEN_URL": f"{NOWHERE}/token",
    "UPTIME_OAUTH_CORP_USERINFO_URL": f"{NOWHERE}/userinfo",
}


@pytest.fixture
def backend() -> str:
    return "sqlite"


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    # Hundreds of requests from one session and one address: the rate limits
    # are not under test here.
    env = {
        **settings_env,
        **PROVIDER_ENV,
        "UPTIME_RATE_LIMIT": "off",
        "UPTIME_LOGIN_RATE_LIMIT": "off",
        "UPTIME_ALLOWED_EMAILS": "*",
        # Belt and braces: the offline probe refuses everything anyway.
        "UPTIME_BLOCK_PRIVATE_TARGETS": "true",
    }
    env.update({k: v for k, v in DOCUMENT_ENV.items() if k != "UPTIME_DATA_DIR"})
    return env


@pytest.fixture
def probe_loop() -> Iterator[ProbeLoop]:
    loop = offline_probe_loop()
    try:
        yield loop
    finally:
        loop.close()


@pytest.fixture
def channel_sender() -> OfflineChannelSender:
    return OfflineChannelSender()


@pytest.fixture
def app(
    settings: Any, clock: Any, db: Any, probe_loop: ProbeLoop, channel_sender: OfflineChannelSender
) -> Any:
    services = {"probe_loop": probe_loop, "channel_sender": channel_sender}
    return create_app(settings, clock=clock, services=services, bind_database=False)


@pytest.fixture
def owned(alice: Any, probe_loop: ProbeLoop) -> list[int]:
    """Alice's monitors, notifications and an API token.

    Monitors 1 to 4: 1 is offline with an active notification (1), 2 is
    paused, 3 is a dns monitor never checked, 4 went down and its notification (2)
    was resolved by hand.
    """
    ids = []
    for body in (
        {"name": "api", "url": "https://example.com/health", "type": "https"},
        # A name: with private targets blocked, a private IP literal is refused at create.
        {"name": "db", "url": "http://db.internal:5432/", "type": "http"},
        {"name": "dns", "type": "dns", "url": "dns://example.com"},
        {"name": "web", "url": "http://www.example.com/", "type": "http"},
    ):
        response = alice.post("/api/v1/monitors", json=body)
        assert response.status_code == 201
        ids.append(response.json["data"]["id"])
    assert alice.post(f"/api/v1/monitors/{ids[1]}/pause", json={}).status_code == 200
    for monitor_id in (ids[0], ids[3]):
        response = alice.post(f"/api/v1/monitors/{monitor_id}/test")
        assert response.json["data"]["status"] == "offline", response.json
    # The checks went through the plugged-in offline probe, nowhere else.
    assert isinstance(probe_loop.prober, OfflineProber)
    assert probe_loop.prober.fetched == [
        "https://example.com/health",
        "http://www.example.com/",
    ]
    assert alice.post("/api/v1/notifications/2/resolve").status_code == 200
    active = alice.get("/api/v1/notifications/active").json["data"]
    assert [n["id"] for n in active] == [1]
    # A token to list and revoke (id 1).
    assert alice.post("/api/v1/tokens", json={"name": "ci", "scope": "read"}).status_code == 201
    # Channel 1, used by monitor 1.
    channel = {"name": "ops", "type": "webhook", "config": {"url": "https://example.com/hook"}}
    assert alice.post("/api/v1/channels", json=channel).status_code == 201
    assert (
        alice.put(f"/api/v1/monitors/{ids[0]}/alerts", json={"channel_ids": [1]}).status_code == 200
    )
    return ids


@schema.parametrize()
@hypothesis_settings(
    max_examples=25,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
)
def test_it_conforms_to_the_document(case: Any, app: Any, alice: Any, owned: list[int]) -> None:
    case.call_and_validate(app=app, cookies={"session_cookie": alice.token}, checks=CHECKS)


def test_every_operation_is_included() -> None:
    documented = {(m.upper(), p) for p, ops in DOCUMENT["paths"].items() for m in ops}
    operations = [result.ok() for result in schema.get_all_operations()]
    tested = {(op.method.upper(), op.path) for op in operations}
    assert tested == documented
    assert ("POST", "/api/v1/monitors/{monitor_id}/test") in tested
    assert ("POST", "/api/v1/channels/{channel_id}/test") in tested
    assert ("GET", "/metrics") in tested and ("GET", "/healthz") in tested
