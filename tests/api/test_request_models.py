"""Bodies validated by pydantic models: pause, bulk and the CLI exchange.

Each constraint is declared once on its model, so the answer to a bad body
and the OpenAPI document say the same thing.
"""

from __future__ import annotations

from typing import Any

from tests.api.shapes import assert_error, create, sqlite_only

pytestmark = sqlite_only

REASON_RULE = "must be a string of at most 500 characters, without NUL"


def test_a_bulk_body_hears_about_every_bad_field_at_once(alice: Any) -> None:
    body = {"action": "pause", "monitor_ids": [0, True], "reason": "x" * 501, "colour": 1}
    response = alice.post("/api/v1/monitors/bulk", json=body)
    error = assert_error(response, 400, "VALIDATION_ERROR", "monitor_ids", "reason", "colour")
    assert error["details"] == {
        "monitor_ids": ["must be a list of 1 to 100 positive integer ids"],
        "reason": [REASON_RULE],
        "colour": ["unknown field"],
    }


def test_a_pause_reason_is_judged_by_its_declared_rule(alice: Any) -> None:
    monitor_id = create(alice)
    for reason in ("x" * 501, "a\x00b", 7):
        response = alice.post(f"/api/v1/monitors/{monitor_id}/pause", json={"reason": reason})
        error = assert_error(response, 400, "VALIDATION_ERROR", "reason")
        assert error["details"] == {"reason": [REASON_RULE]}
    response = alice.post(f"/api/v1/monitors/{monitor_id}/pause", json={"reason": "x" * 500})
    assert response.status_code == 200
    assert response.get_json()["data"]["pause_reason"] == "x" * 500


def test_the_cli_exchange_names_both_fields(anon: Any) -> None:
    response = anon.post("/api/v1/auth/cli/exchange", json={"ticket": "", "verifier": "short"})
    error = assert_error(response, 400, "VALIDATION_ERROR", "ticket", "verifier")
    assert error["details"] == {
        "ticket": ["required: the ticket from the sign-in redirect"],
        "verifier": ["required: the PKCE verifier (43 to 128 characters)"],
    }


def test_the_document_shows_the_constraints_that_validate(anon: Any) -> None:
    schemas = anon.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    reason = schemas["PauseRequest"]["properties"]["reason"]["anyOf"][0]
    assert reason == {"type": "string", "maxLength": 500, "pattern": "^[^\\x00]*$"}
    ids = schemas["BulkRequest"]["properties"]["monitor_ids"]["anyOf"][0]  # or tag instead
    assert (ids["minItems"], ids["maxItems"]) == (1, 100)
    assert ids["items"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
    verifier = schemas["CliExchangeRequest"]["properties"]["verifier"]
    assert verifier["pattern"] == "^[A-Za-z0-9._~-]{43,128}$"
