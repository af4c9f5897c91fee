"""API tokens in API tests: mint one through the session, call with it as a bearer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.conftest import ApiUser

TOKENS = "/api/v1/tokens"


@dataclass
class TokenUser(ApiUser):
    """A caller with ``Authorization: Bearer <token>`` and no cookie (unless given one)."""

    def __post_init__(self) -> None:
        pass  # no session cookie: the bearer is the credential

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return self.client.open(path, method=method, headers=headers, **kwargs)


def mint(
    owner: ApiUser, scope: str = "write", *, team: str | None = None, **more: Any
) -> TokenUser:
    """A new token of *owner*'s, created through the API with their session (in *team*,
    id or slug, else their personal team)."""
    headers = {} if team is None else {"X-Uptime-Team": team}
    body = {"name": f"{scope} token", "scope": scope, **more}
    response = owner.post(TOKENS, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    token = response.get_json()["data"]["token"]
    return TokenUser(owner.client.application.test_client(), token, owner.user)
