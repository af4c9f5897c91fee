"""GET /api/v1/openapi.json: a valid OpenAPI 3.1 document of the whole API."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import jsonschema_rs
import pytest
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from tests.api.shapes import sqlite_only
from uptime_server.api.openapi import build_document
from uptime_server.errors import STATUS_BY_CODE
from uptime_server.schemas import monitors, service
from uptime_server.schemas.checks import History, Statistics
from uptime_server.schemas.monitor_config import AlertSettingsIn, MonitorConfig
from uptime_server.schemas.monitors import Monitor, MonitorSummary
from uptime_server.schemas.notifications import Notification
from uptime_server.schemas.service import Health
from uptime_server.wsgi.operations import operation_of

pytestmark = sqlite_only

# Every endpoint of docs/api.md#endpoint-index.
SPEC_OPERATIONS = {
    ("get", "/api/v1/auth/{provider}/login"),
    ("get", "/api/v1/auth/{provider}/callback"),
    ("post", "/api/v1/auth/cli/exchange"),
    ("get", "/api/v1/auth/user"),
    ("post", "/api/v1/auth/refresh"),
    ("post", "/api/v1/auth/logout"),
    ("get", "/api/v1/monitors"),
    ("post", "/api/v1/monitors"),
    ("post", "/api/v1/monitors/bulk"),
    ("post", "/api/v1/monitors/apply"),
    ("get", "/api/v1/monitors/export"),
    ("get", "/api/v1/monitors/{monitor_id}"),
    ("put", "/api/v1/monitors/{monitor_id}"),
    ("delete", "/api/v1/monitors/{monitor_id}"),
    ("post", "/api/v1/monitors/{monitor_id}/pause"),
    ("post", "/api/v1/monitors/{monitor_id}/resume"),
    ("post", "/api/v1/monitors/{monitor_id}/test"),
    ("get", "/api/v1/monitors/{monitor_id}/stats"),
    ("get", "/api/v1/monitors/{monitor_id}/history"),
    ("get", "/api/v1/monitors/{monitor_id}/dependencies"),
    ("get", "/api/v1/monitors/{monitor_id}/alerts"),
    ("put", "/api/v1/monitors/{monitor_id}/alerts"),
    ("post", "/api/v1/monitors/{monitor_id}/ping-token"),
    ("post", "/api/v1/monitors/{monitor_id}/badge-token"),
    # Status pages and badges (issue 16).
    ("get", "/api/v1/status-pages"),
    ("post", "/api/v1/status-pages"),
    ("get", "/api/v1/status-pages/{page}"),
    ("put", "/api/v1/status-pages/{page}"),
    ("delete", "/api/v1/status-pages/{page}"),
    ("get", "/status/{slug}"),
    ("get", "/status/{slug}.json"),
    ("get", "/badge/{badge_token}/status.svg"),
    ("get", "/badge/{badge_token}/uptime-{period}.svg"),
    ("get", "/badge/{badge_token}/response-time.svg"),
    ("get", "/api/v1/notifications"),
    ("get", "/api/v1/notifications/active"),
    ("get", "/api/v1/notifications/recent"),
    ("get", "/api/v1/notifications/{notification_id}"),
    ("post", "/api/v1/notifications/{notification_id}/acknowledge"),
    ("post", "/api/v1/notifications/{notification_id}/resolve"),
    ("post", "/api/v1/tokens"),
    ("get", "/api/v1/tokens"),
    ("delete", "/api/v1/tokens/{token_id}"),
    ("post", "/api/v1/agents"),
    ("get", "/api/v1/agents"),
    ("delete", "/api/v1/agents/{agent_id}"),
    ("post", "/api/v1/agent/claims"),
    ("post", "/api/v1/agent/leases"),
    ("post", "/api/v1/agent/results"),
    ("get", "/api/v1/channels"),
    ("post", "/api/v1/channels"),
    ("get", "/api/v1/channels/{channel_id}"),
    ("put", "/api/v1/channels/{channel_id}"),
    ("delete", "/api/v1/channels/{channel_id}"),
    ("post", "/api/v1/channels/{channel_id}/test"),
    ("get", "/api/v1/maintenance"),
    ("post", "/api/v1/maintenance"),
    ("get", "/api/v1/maintenance/{window_id}"),
    ("put", "/api/v1/maintenance/{window_id}"),
    ("delete", "/api/v1/maintenance/{window_id}"),
    ("post", "/api/v1/maintenance/{window_id}/start"),
    ("post", "/api/v1/maintenance/{window_id}/end"),
    # Teams (issue 31).
    ("get", "/api/v1/teams"),
    ("post", "/api/v1/teams"),
    ("get", "/api/v1/teams/{team}"),
    ("put", "/api/v1/teams/{team}"),
    ("delete", "/api/v1/teams/{team}"),
    ("get", "/api/v1/teams/{team}/members"),
    ("put", "/api/v1/teams/{team}/members/{user_id}"),
    ("delete", "/api/v1/teams/{team}/members/{user_id}"),
    ("post", "/api/v1/teams/{team}/invitations"),
    ("get", "/api/v1/teams/{team}/invitations"),
    ("delete", "/api/v1/teams/{team}/invitations/{invitation_id}"),
    ("post", "/api/v1/invitations/accept"),
    ("get", "/api/v1/teams/{team}/audit"),
    ("get", "/api/v1/openapi.json"),
    ("get", "/healthz"),
    ("get", "/metrics"),
    # Heartbeat pings (issue 13).
    ("get", "/ping/{token}"),
    ("post", "/ping/{token}"),
    ("get", "/ping/{token}/{kind}"),
    ("post", "/ping/{token}/{kind}"),
}
PUBLIC = {
    "/ping/{token}",
    "/ping/{token}/{kind}",
    "/api/v1/auth/{provider}/login",
    "/api/v1/auth/{provider}/callback",
    "/api/v1/auth/cli/exchange",
    "/api/v1/openapi.json",
    "/healthz",
    "/metrics",
    "/status/{slug}",
    "/status/{slug}.json",
    "/badge/{badge_token}/status.svg",
    "/badge/{badge_token}/uptime-{period}.svg",
    "/badge/{badge_token}/response-time.svg",
}


@pytest.fixture
def document(anon: Any) -> dict[str, Any]:
    response = anon.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    return response.get_json()


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): op
        for path, item in document["paths"].items()
        for method, op in item.items()
    }


def test_it_is_a_valid_openapi_31_document(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1.")
    errors = [
        f"{list(e.instance_path)}: {e.message}" for e in OPENAPI_31_VALIDATOR.iter_errors(document)
    ]
    assert errors == []
    for name, schema in document["components"]["schemas"].items():
        assert jsonschema_rs.meta.is_valid(schema), name


def test_it_is_the_document_of_this_server(
    document: dict[str, Any], settings: Any, app: Any
) -> None:
    assert document == build_document(settings, app)
    create = document["components"]["schemas"]["MonitorCreate"]["properties"]
    assert create["check_interval"]["minimum"] == settings.min_check_interval
    assert create["locations"]["anyOf"][0]["items"]["enum"] == list(settings.locations)


def test_it_describes_every_endpoint_of_the_spec(document: dict[str, Any]) -> None:
    assert set(operations(document)) == SPEC_OPERATIONS


def test_it_describes_every_route_the_app_serves(app: Any, document: dict[str, Any]) -> None:
    documented = set(operations(document))
    for rule in app.url_map.iter_rules():
        served = rule.rule.startswith(("/api/", "/ping/"))
        if not (served or rule.rule in ("/healthz", "/metrics")):
            continue  # pages for browsers, static files
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (method.lower(), path) in documented, (method, path)


# Refused to API tokens: sign-in and session upkeep, and token management.
SESSION_ONLY = {
    "/api/v1/auth/refresh",
    "/api/v1/auth/logout",
    "/api/v1/tokens",
    "/api/v1/tokens/{token_id}",
    "/api/v1/invitations/accept",  # joins the person signed in
}
# Paths whose other methods take a token too: a token does not mint agent tokens.
SESSION_ONLY_OPERATIONS = {
    ("post", "/api/v1/agents"),
    ("delete", "/api/v1/agents/{agent_id}"),
    ("post", "/api/v1/teams"),  # a team is made by a person, not a token of another team
}


def test_it_marks_public_and_session_operations(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert schemes["session"] == {"type": "apiKey", "in": "cookie", "name": "session_cookie"}
    assert schemes["apiToken"]["type"] == "http"
    assert schemes["apiToken"]["scheme"] == "bearer"
    assert document["security"] == [{"session": []}, {"apiToken": []}]
    for (method, path), op in operations(document).items():
        if path in PUBLIC:
            assert {} in op["security"] or op["security"] == [], path
            assert "401" not in op["responses"] or path == "/metrics", path
        elif path in SESSION_ONLY or (method, path) in SESSION_ONLY_OPERATIONS:
            assert op["security"] == [{"session": []}], path
            assert "403" in op["responses"], path
        elif path.startswith("/api/v1/agent/"):
            assert op["security"] == [{"agentToken": []}], path  # agent tokens only
            assert {"401", "403"} <= set(op["responses"]), path
        else:
            assert "security" not in op, path  # the document-wide session or token
            assert op["responses"]["401"] == {"$ref": "#/components/responses/E401"}, path
            assert op["responses"]["403"] == {"$ref": "#/components/responses/E403"}, path


def test_it_documents_error_responses(document: dict[str, Any]) -> None:
    responses = document["components"]["responses"]
    for (method, path), op in operations(document).items():
        assert "500" in op["responses"], path
        if method in ("post", "put", "delete") and path not in PUBLIC:
            assert "403" in op["responses"], (method, path)
        if "requestBody" in op:
            assert {"400", "413"} <= set(op["responses"]), (method, path)
        if "{monitor_id}" in path:
            assert "404" in op["responses"], path
    documented_codes = {
        code
        for response in responses.values()
        for code in response["content"]["application/json"]["schema"]["properties"]["error"][
            "properties"
        ]["code"]["enum"]
    }
    assert documented_codes == set(STATUS_BY_CODE)
    assert set(responses["E429"]["headers"]) == {
        "Retry-After",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
    }


def test_it_takes_request_schemas_from_the_validation_models(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    assert set(schemas["MonitorCreate"]["properties"]) == set(MonitorConfig.model_fields)
    assert set(schemas["MonitorUpdate"]["properties"]) == set(MonitorConfig.model_fields)
    assert set(schemas["AlertSettingsUpdate"]["properties"]) == set(AlertSettingsIn.model_fields)
    assert schemas["MonitorCreate"]["required"] == ["name", "type"]
    assert schemas["MonitorCreate"]["additionalProperties"] is False
    assert "required" not in schemas["MonitorUpdate"]
    assert schemas["MonitorCreate"]["properties"]["timeout"]["maximum"] == 300


def test_it_validates_the_examples(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for name in ("MonitorCreate", "MonitorUpdate", "AlertSettingsUpdate"):
        resolver = {**schemas[name], "components": document["components"]}
        validator = jsonschema_rs.Draft202012Validator(resolver)
        for example in schemas[name]["examples"]:
            assert validator.is_valid(example), (name, example)


def test_it_takes_response_schemas_from_the_response_models(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for model in (Monitor, MonitorSummary, Notification, Statistics, History, Health):
        fields = [f.alias or name for name, f in model.model_fields.items()]
        assert list(schemas[model.__name__]["properties"]) == fields, model
        # /healthz gives a reason only with a 503, an agent count only when any is degraded.
        optional = {"reason", "agents"} if model is Health else set()
        assert schemas[model.__name__]["required"] == [f for f in fields if f not in optional]
    one = operations(document)[("get", "/api/v1/monitors/{monitor_id}")]
    assert one["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MonitorData"
    }
    assert schemas["MonitorData"]["properties"]["data"] == {"$ref": "#/components/schemas/Monitor"}


def test_a_changed_response_model_changes_the_document(
    app: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Health(service.Health):  # the same name: the same component
        region: str

    view = app.view_functions["health.healthz"]
    before = build_document(settings, app)["components"]["schemas"]["Health"]
    changed = replace(operation_of(view), ok={200: Health})
    monkeypatch.setattr(view, "uptime_operation", changed)
    after = build_document(settings, app)["components"]["schemas"]["Health"]

    assert "region" not in before["properties"]
    assert after["properties"]["region"] == {"type": "string"}
    assert after["required"] == [*before["required"], "region"]
    assert {k: v for k, v in after["properties"].items() if k != "region"} == before["properties"]


def test_a_changed_nested_model_changes_every_schema_that_holds_it(
    app: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class MonitorSummary(monitors.MonitorSummary):
        region: str | None

    class MonitorList(monitors.MonitorList):
        data: list[MonitorSummary]

    view = app.view_functions["api.monitors.list_monitors"]
    monkeypatch.setattr(
        view, "uptime_operation", replace(operation_of(view), ok={200: MonitorList})
    )
    schemas = build_document(settings, app)["components"]["schemas"]

    summary = schemas["MonitorSummary"]["properties"]
    assert summary["region"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    items = schemas["MonitorList"]["properties"]["data"]["items"]
    assert items == {"$ref": "#/components/schemas/MonitorSummary"}


def test_it_describes_apply_entries_with_their_alerts_and_the_tag_filter(
    document: dict[str, Any],
) -> None:
    body = document["paths"]["/api/v1/monitors/apply"]["post"]["requestBody"]
    schema = document["components"]["schemas"][
        body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    ]
    entry = schema["properties"]["monitors"]["items"]
    assert {"name", "key", "tags", "alerts"} <= set(entry["properties"])
    assert set(schema["properties"]) == {"monitors", "prune", "dry_run"}
    listing = document["paths"]["/api/v1/monitors"]["get"]["parameters"]
    assert any(p["name"] == "tag" and p["schema"]["type"] == "array" for p in listing)
    export = document["paths"]["/api/v1/monitors/export"]["get"]["parameters"]
    assert [p["name"] for p in export] == ["tag", "X-Uptime-Team"]
