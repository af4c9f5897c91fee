"""What the agent API carries: a check's spec as JSON, and back.

The server serialises the ``CheckSpec`` the dispatcher built from the claimed
row; the agent rebuilds the same ``CheckSpec`` and hands it to the same
probes. Only JSON values: heartbeat monitors are never claimed by agents.
The server's private-target policy is the claim's ``block_private_targets``,
not the spec's: ``claimed_spec`` puts it in.
"""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from typing import Any

from uptime_server.checks.types import CheckSpec

_FIELDS = {f.name for f in fields(CheckSpec)}


def spec_to_json(spec: CheckSpec) -> dict[str, Any]:
    out = asdict(spec)
    del out["block_private"]  # the claim says it (block_private_targets)
    out["options"] = dict(spec.options)
    out["expected_status"] = list(spec.expected_status)
    return out


def spec_from_json(data: dict[str, Any]) -> CheckSpec:
    """The CheckSpec of *data*; unknown keys (a newer server's) are ignored."""
    known = {key: value for key, value in data.items() if key in _FIELDS}
    known["expected_status"] = tuple(known.get("expected_status") or ())
    known["options"] = dict(known.get("options") or {})
    known["headers"] = dict(known.get("headers") or {})
    return CheckSpec(**known)


def claimed_spec(claim: dict[str, Any]) -> CheckSpec:
    """The check a claim asks for, under the server's private-target policy."""
    spec = spec_from_json(claim["spec"])
    if claim.get("block_private_targets") is True:
        spec = replace(spec, block_private=True)
    return spec
