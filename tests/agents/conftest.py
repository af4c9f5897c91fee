"""Probe agents: a server with two locations, alice as its admin, agent callers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ApiUser
from uptime_server import db
from uptime_server.auth import agent_tokens
from uptime_server.clock import ManualClock
from uptime_server.config import Settings

AGENT_API = "/api/v1/agent"


@pytest.fixture
def extra_env() -> dict[str, str]:
    """Settings a test adds; parametrize it directly to change them."""
    return {}


@pytest.fixture
def settings_env(settings_env: dict[str, str], extra_env: dict[str, str]) -> dict[str, str]:
    return {
        **settings_env,
        "UPTIME_LOCATIONS": "local,eu-west",
        "UPTIME_ADMINS": "alice@example.com",
        "UPTIME_RATE_LIMIT": "off",
        **extra_env,
    }


@dataclass
class AgentCaller:
    """An agent calling the agent API with its token through the Flask test client."""

    client: Any
    token: str
    id: int

    def post(self, path: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return self.client.post(f"{AGENT_API}{path}", headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return self.client.get(path, headers=headers, **kwargs)


@pytest.fixture
def make_agent(app: Any, settings: Settings, clock: ManualClock) -> Any:
    def make(location: str = "eu-west", name: str | None = None) -> AgentCaller:
        with db.database.connection_context():
            secret, row = agent_tokens.create_agent(
                settings, location=location, name=name, now=clock.now()
            )
        return AgentCaller(app.test_client(), secret, row.id)

    return make


@pytest.fixture
def agent(make_agent: Any) -> AgentCaller:
    return make_agent()


def bearer(user: ApiUser, token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
