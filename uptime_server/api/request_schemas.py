"""Request bodies whose schemas depend on the server's settings.

``MonitorConfig`` and ``AlertSettingsIn`` validate these bodies; their JSON
Schemas are completed here with the rules bound to the running server (the
minimum check interval, the known locations), so the document cannot drift
from validation. A PUT body is the same object with nothing required.
"""

from __future__ import annotations

import copy

from uptime_server.config import Settings
from uptime_server.schemas.monitor_apply import ApplyRequest
from uptime_server.schemas.monitor_config import AlertSettingsIn, MonitorConfig
from uptime_server.wsgi.operations import JSON, RequestSchema


def _model_schema(model: type, settings: Settings) -> JSON:
    schema = copy.deepcopy(model.model_json_schema(ref_template="#/components/schemas/{model}"))
    props = schema["properties"]
    if "check_interval" in props:
        props["check_interval"]["minimum"] = settings.min_check_interval
    if "locations" in props:
        array = props["locations"]["anyOf"][0]
        array["items"] = {"type": "string", "enum": list(settings.locations)}
    if "url" in props:
        props["url"]["anyOf"][0].update({"format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"})
    return schema


def _without_defaults(schema: JSON) -> JSON:
    """The same object schema with nothing required and no defaults: a PUT body."""
    out = copy.deepcopy(schema)
    out.pop("required", None)
    for prop in out["properties"].values():
        prop.pop("default", None)
    return out


def _monitor_create(settings: Settings) -> JSON:
    schema = _model_schema(MonitorConfig, settings)
    schema["description"] = "A new monitor. Omitted fields take the defaults shown."
    # url is required for the checked types, and must be https for type https.
    schema["allOf"] = [
        {
            "if": {"properties": {"type": {"enum": ["http", "https"]}}, "required": ["type"]},
            "then": {"required": ["url"], "properties": {"url": {"type": "string"}}},
        },
        {
            "if": {"properties": {"type": {"const": "https"}}, "required": ["type"]},
            "then": {"properties": {"url": {"pattern": "^[Hh][Tt][Tt][Pp][Ss]://"}}},
        },
    ]
    schema["examples"] = [
        {"name": "api-prod", "url": "https://example.com/health", "type": "https"},
    ]
    return schema


def _monitor_update(settings: Settings) -> JSON:
    schema = _without_defaults(_model_schema(MonitorConfig, settings))
    schema["description"] = (
        "Any subset of the monitor's fields. The monitor as it would be after the "
        "change must be valid as a whole, or nothing changes."
    )
    schema["examples"] = [{"name": "api-prod (EU)", "check_interval": 120}]
    return schema


def _alert_settings_update(settings: Settings) -> JSON:
    schema = _without_defaults(_model_schema(AlertSettingsIn, settings))
    schema["description"] = "Any subset of the alert settings."
    schema["examples"] = [{"alert_threshold": 3, "alert_on_recovery": False}]
    return schema


MONITOR_CREATE = RequestSchema("MonitorCreate", _monitor_create)
MONITOR_UPDATE = RequestSchema("MonitorUpdate", _monitor_update)
ALERT_SETTINGS_UPDATE = RequestSchema("AlertSettingsUpdate", _alert_settings_update)


def _monitors_apply(settings: Settings) -> JSON:
    """The whole desired set: each entry a create body with its alert settings beside."""
    schema = copy.deepcopy(ApplyRequest.model_json_schema())
    entry = _monitor_create(settings)
    entry["properties"]["alerts"] = {
        "anyOf": [{"$ref": "#/components/schemas/AlertSettingsUpdate"}, {"type": "null"}],
        "description": "Alert settings of this monitor; those omitted take their defaults.",
    }
    entry["description"] = "One monitor as a file states it (docs/monitors-as-code.md)."
    entry.pop("examples", None)
    schema["properties"]["monitors"]["items"] = entry
    schema["description"] = "Make your monitors match this set (docs/monitors-as-code.md)."
    schema["examples"] = [
        {
            "monitors": [
                {"key": "api", "name": "api-prod", "type": "https", "url": "https://example.com/"}
            ],
            "prune": False,
            "dry_run": True,
        }
    ]
    return schema


MONITORS_APPLY = RequestSchema("MonitorsApply", _monitors_apply)
