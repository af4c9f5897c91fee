"""What the probe needs, built from what the database holds.

`check_spec` turns a stored monitor (a `Monitor` row or a plain dict of its
columns) into the probe's `CheckSpec`; `probe_config` turns the settings into
the `ProbeConfig` every Prober of the process shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from uptime_server.checks.types import RETRY_DELAY_CAP, CheckSpec
from uptime_server.config import AgentSettings, Settings
from uptime_server.models import DEFAULT_EXPECTED_STATUS, TYPE_FIELDS

if TYPE_CHECKING:
    from uptime_server.engine.probe import ProbeConfig

# The CheckSpec's own fields; the other type fields go to CheckSpec.options.
_COMMON = (
    "method",
    "headers",
    "body",
    "follow_redirects",
    "verify_ssl",
    "expected_status",
    "expected_content",
    "excluded_content",
    "json_path",
    "expected_json_value",
)

# State a probe of the type reads besides its configuration (CheckSpec.options).
_STATE_OPTIONS = {"heartbeat": ("ping_started_at", "state_version")}

# The Monitor columns a CheckSpec reads (the claim query selects just these).
SPEC_FIELDS = (
    "url",
    "type",
    *sorted({name for names in TYPE_FIELDS.values() for name in names} - set(_COMMON)),
    *_COMMON,
    "timeout",
    "retry_count",
    "check_interval",
    *sorted({name for names in _STATE_OPTIONS.values() for name in names}),
)


def probe_config(settings: Settings | AgentSettings) -> ProbeConfig:
    # Imported here: the database worker reads check specs' fields (through
    # the dispatcher) but never probes, and the prober pulls in aiohttp.
    from uptime_server.engine.probe import ProbeConfig

    return ProbeConfig(
        block_private=settings.block_private_targets,
        max_body_bytes=settings.max_body_bytes,
        ca_bundle=settings.ca_bundle,
        event_loop=settings.event_loop,
    )


def check_spec(monitor: Any) -> CheckSpec:
    """The CheckSpec of a monitor row or of a mapping of its columns."""
    get = monitor.get if isinstance(monitor, Mapping) else lambda name: getattr(monitor, name)
    kind = get("type") or "http"
    url = get("url") or ""
    if kind == "dns" and not url and get("query_name"):
        url = f"dns://{get('query_name')}"  # a dns monitor may name only its query
    if not url and kind in ("http", "https"):
        # Other types' probes fail a run with no target themselves.
        raise ValueError("monitor has no URL")
    options = {name: get(name) for name in TYPE_FIELDS.get(kind, ()) if name not in _COMMON}
    options.update((name, get(name)) for name in _STATE_OPTIONS.get(kind, ()))
    if kind == "heartbeat" and isinstance(monitor, Mapping):
        options["deadline"] = monitor.get("next_check_at")  # the claimed due time
        options["id"] = monitor.get("monitor")  # the monitor's, for its schedule's log
    return CheckSpec(
        url=url,
        type=kind,
        options=options,
        method=(get("method") or "GET").upper(),
        headers=dict(get("headers") or {}),
        body=get("body"),
        timeout=int(get("timeout")),
        follow_redirects=bool(get("follow_redirects")),
        verify_ssl=bool(get("verify_ssl")),
        expected_status=tuple(get("expected_status") or DEFAULT_EXPECTED_STATUS),
        expected_content=get("expected_content"),
        excluded_content=get("excluded_content"),
        json_path=get("json_path"),
        expected_json_value=get("expected_json_value"),
        retry_count=int(get("retry_count") or 0),
        check_interval=int(get("check_interval")),
    )


def run_budget(spec: CheckSpec) -> float:
    """The longest a check run may take: every attempt times out, every retry waits."""
    retries = max(spec.retry_count, 0)
    return spec.timeout * (1 + retries) + min(spec.check_interval, RETRY_DELAY_CAP) * retries
