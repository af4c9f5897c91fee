"""The agent's HTTP client for the agent API: one method per endpoint, typed failures.

``Unreachable``: no answer, or a 5xx/429 answer (try again later; keep what
you have). ``Refused``: the server said no for good (401/403: the token is
revoked or not an agent token; 4xx: a request it will never accept).
"""

from __future__ import annotations

from typing import Any

import requests
from urllib3.exceptions import NewConnectionError

from uptime_server import __version__

TIMEOUT = 10.0  # seconds per request: connect and read


class Unreachable(Exception):
    """The server could not be reached or could not answer now.

    *maybe_delivered*: the request may have reached the server (the answer is
    what was lost: a read timeout, a reset after sending, a 5xx). False when
    it surely did not: no connection was made, or the server answered 429.
    """

    def __init__(self, message: str, *, maybe_delivered: bool = True) -> None:
        super().__init__(message)
        self.maybe_delivered = maybe_delivered


class Refused(Exception):
    """The server refused the request; repeating it will not help."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class AgentClient:
    def __init__(self, server: str, token: str, *, timeout: float = TIMEOUT) -> None:
        self.base = server.rstrip("/") + "/api/v1/agent"
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"Bearer {token}", "User-Agent": f"uptime-agent/{__version__}"}
        )

    def claim(self, limit: int, report: dict[str, Any]) -> dict[str, Any]:
        return self._post("/claims", {"limit": limit, "agent": report})

    def renew(self, leases: list[dict[str, Any]], report: dict[str, Any]) -> dict[str, Any]:
        return self._post("/leases", {"leases": leases, "agent": report})

    def post_results(
        self, batch_id: str, results: list[dict[str, Any]], report: dict[str, Any]
    ) -> dict[str, Any]:
        body = {"batch_id": batch_id, "results": results, "agent": report}
        return self._post("/results", body)

    def close(self) -> None:
        self.session.close()

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.session.post(self.base + path, json=body, timeout=self.timeout)
        except requests.RequestException as exc:
            raise Unreachable(
                f"{self.base}{path}: {exc.__class__.__name__}", maybe_delivered=not _not_sent(exc)
            ) from None
        if response.status_code >= 500 or response.status_code == 429:
            raise Unreachable(
                f"{self.base}{path}: HTTP {response.status_code}",
                maybe_delivered=response.status_code != 429,
            )
        try:
            data: dict[str, Any] = response.json()
        except ValueError:
            raise Unreachable(f"{self.base}{path}: not a JSON answer") from None
        if response.status_code >= 400:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise Refused(response.status_code, str(error.get("message", "refused")))
        return data


def _not_sent(exc: requests.RequestException) -> bool:
    """Whether *exc* says no connection was ever made (so nothing was sent)."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    if isinstance(exc, requests.ConnectionError) and exc.args:
        reason = getattr(exc.args[0], "reason", exc.args[0])
        return isinstance(reason, NewConnectionError)
    return False
