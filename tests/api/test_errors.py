"""Every error, the framework's own included, in the {error: {code, message, details}} shape."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, monitor_body, sqlite_only
from uptime_server.errors import STATUS_BY_CODE

URL = "/api/v1/monitors"
MIB = 1024 * 1024


def test_it_maps_codes_to_the_documented_statuses() -> None:
    by_status: dict[int, set[str]] = {}
    for code, status in STATUS_BY_CODE.items():
        by_status.setdefault(status, set()).add(code)
    assert by_status == {
        400: {"VALIDATION_ERROR", "INVALID_MONITOR_TYPE", "OAUTH_STATE_MISMATCH", "OAUTH_ERROR",
              "INVALID_JSON"},
        401: {"UNAUTHORIZED"},
        403: {"INSUFFICIENT_PERMISSIONS", "QUOTA_EXCEEDED", "SIGNUP_CLOSED", "FORBIDDEN"},
        404: {
            "MONITOR_NOT_FOUND",
            "NOTIFICATION_NOT_FOUND",
            "CHANNEL_NOT_FOUND",
            "PROVIDER_NOT_FOUND",
            "NOT_FOUND",
            "TOKEN_NOT_FOUND",
            "STATUS_PAGE_NOT_FOUND",
            "MAINTENANCE_NOT_FOUND",
            "TEAM_NOT_FOUND",
        },
        405: {"METHOD_NOT_ALLOWED"},
        409: {"NOTIFICATION_NOT_ACTIVE", "MONITOR_ALREADY_PAUSED", "MONITOR_NOT_PAUSED",
              "MONITOR_TYPE_NOT_SUPPORTED", "IDENTITY_IN_USE", "EMAIL_IN_USE", "SLUG_TAKEN",
              "LAST_OWNER"},
        413: {"PAYLOAD_TOO_LARGE"},
        429: {"RATE_LIMIT_EXCEEDED"},
        500: {"INTERNAL_ERROR"},
        503: {"SERVICE_UNAVAILABLE"},  # a ping the server could not record: send it again
        504: {"TEST_RUN_TIMEOUT"},  # a "test now" run over UPTIME_TEST_RUN_TIMEOUT
    }  # fmt: skip


@pytest.mark.parametrize(
    "path", ["/nope", "/api/v1/nope", "/api/v1/monitors/abc", "/api/v2/monitors"]
)
@sqlite_only
def test_it_renders_unknown_paths(anon: Any, alice: Any, path: str) -> None:
    assert_error(anon.get(path), 404, "NOT_FOUND")
    assert_error(alice.get(path), 404, "NOT_FOUND")


@sqlite_only
def test_it_renders_wrong_methods_with_allow(alice: Any) -> None:
    response = alice.request("PATCH", f"{URL}/1")
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "PUT", "DELETE"}
    assert_error(alice.delete(URL), 405, "METHOD_NOT_ALLOWED")
    assert_error(alice.post("/healthz"), 405, "METHOD_NOT_ALLOWED")


@sqlite_only
def test_it_refuses_bodies_over_one_mebibyte(alice: Any) -> None:
    mid = create(alice)
    big = b'{"name": "' + b"x" * MIB + b'"}'
    for method, path in (("POST", URL), ("PUT", f"{URL}/{mid}"), ("POST", f"{URL}/{mid}/resume")):
        response = alice.request(method, path, data=big, content_type="application/json")
        assert_error(response, 413, "PAYLOAD_TOO_LARGE")
    # Just under the limit is read (and then judged on its content).
    near = b'{"name": "' + b"x" * (MIB - 20) + b'"}'
    assert_error(alice.post(URL, data=near, content_type="application/json"), 400,
                 "VALIDATION_ERROR")  # fmt: skip


@pytest.mark.parametrize(
    "raw",
    [b"{bad", b'{"name": "x",}', b"\xff\xfe", b"[" * 100_000, b'{"name": "\\ud800"}', b"  "],
    ids=["syntax", "trailing-comma", "not-utf8", "deep", "lone-surrogate", "blank"],
)
@sqlite_only
def test_it_refuses_malformed_json(alice: Any, raw: bytes) -> None:
    response = alice.post(URL, data=raw, content_type="application/json")
    assert_error(response, 400, "INVALID_JSON")
    assert alice.get(URL).get_json()["pagination"]["total"] == 0


@sqlite_only
def test_it_hides_internal_errors(settings: Any, clock: Any, db: Any) -> None:
    from uptime_server.app import create_app

    app = create_app(settings, clock=clock, bind_database=False)

    def explode() -> Any:
        raise RuntimeError("secret detail: password=hunter2")

    app.add_url_rule("/boom", "boom", explode)
    response = app.test_client().get("/boom")
    error = assert_error(response, 500, "INTERNAL_ERROR")
    body = response.get_data(as_text=True)
    assert "hunter2" not in body and "Traceback" not in body and "RuntimeError" not in body
    assert error["details"] == {}


@sqlite_only
def test_it_gives_validation_details_as_lists_of_messages(alice: Any) -> None:
    response = alice.post(URL, json=monitor_body(timeout="x", retry_count=99, extra=1))
    error = assert_error(response, 400, "VALIDATION_ERROR", "timeout", "retry_count", "extra")
    assert "timeout" in error["message"]


# Each would make Python's json/codec machinery talk: parser wording, char
# offsets, codec names, interpreter limits.
UNTIDY_JSON = [
    (b"{bad", "Request body is not valid JSON at line 1, column 2"),
    (b'{\n  "name": "x",\n}', "Request body is not valid JSON at line 3, column 1"),
    (b"", "Request body must be JSON"),
    (b"\xff\xfe\xfd", "Request body is not UTF-8 text"),
    (b'{"timeout": 1' + b"0" * 5000 + b"}", "Request body is not valid JSON"),
    (b'{"timeout": NaN}', "Request body is not valid JSON: NaN is not a JSON number"),
    (b'{"timeout": -Infinity}', "Request body is not valid JSON: -Infinity is not a JSON number"),
    (b'{"name": "\\ud800"}', "Request body is invalid Unicode (a lone surrogate)"),
]


@pytest.mark.parametrize(("raw", "message"), UNTIDY_JSON)
@sqlite_only
def test_a_json_error_is_told_in_our_words(alice: Any, raw: bytes, message: str) -> None:
    for method, path in (("POST", URL), ("POST", f"{URL}/bulk")):
        response = alice.request(method, path, data=raw, content_type="application/json")
        error = assert_error(response, 400, "INVALID_JSON")
        assert error["message"] == message
        text = response.get_data(as_text=True)
        for internal in ("Expecting", "char ", "codec", "sys.", "Exceeds", "Error", "utf-16"):
            assert internal not in text
