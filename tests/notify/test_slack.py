from __future__ import annotations

import pytest

from uptime_server.notify import (
    PermanentDeliveryError,
    SlackTransport,
    TemporaryDeliveryError,
    slack_payload,
)

SECRET_PATH = "/services/T000/B000/XXXXsecretXXXX"


def test_it_posts_the_json_payload(webhook_server, make_content):
    payload = slack_payload(make_content())
    SlackTransport().post(webhook_server.base_url + SECRET_PATH, payload)

    [request] = webhook_server.requests
    assert request["path"] == SECRET_PATH
    assert request["content_type"] == "application/json"
    assert request["json"] == payload
    assert request["json"]["text"].startswith("api-prod is DOWN: expected status in [200], got 503")


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_server_errors_and_rate_limits_are_temporary(webhook_server, make_content, status):
    webhook_server.status = status
    with pytest.raises(TemporaryDeliveryError) as excinfo:
        SlackTransport().post(webhook_server.base_url + SECRET_PATH, slack_payload(make_content()))
    assert excinfo.value.code == status
    assert "secret" not in str(excinfo.value)


def test_429_carries_retry_after(webhook_server, make_content):
    webhook_server.status = 429
    webhook_server.headers = {"Retry-After": "17"}
    with pytest.raises(TemporaryDeliveryError) as excinfo:
        SlackTransport().post(webhook_server.base_url + SECRET_PATH, slack_payload(make_content()))
    assert excinfo.value.retry_after == 17.0


@pytest.mark.parametrize("status", [400, 403, 404, 410])
def test_client_errors_are_permanent(webhook_server, make_content, status):
    webhook_server.status = status
    webhook_server.reply = "invalid_token"
    with pytest.raises(PermanentDeliveryError) as excinfo:
        SlackTransport().post(webhook_server.base_url + SECRET_PATH, slack_payload(make_content()))
    assert excinfo.value.code == status
    assert "invalid_token" in str(excinfo.value)
    assert "secret" not in str(excinfo.value)


def test_redirects_are_not_followed(webhook_server, make_content):
    webhook_server.status = 302
    webhook_server.headers = {"Location": "http://169.254.169.254/"}
    with pytest.raises(PermanentDeliveryError):
        SlackTransport().post(webhook_server.base_url + SECRET_PATH, slack_payload(make_content()))
    assert len(webhook_server.requests) == 1


def test_connection_refused_is_temporary_and_hides_the_token(closed_port, make_content):
    url = f"http://127.0.0.1:{closed_port}{SECRET_PATH}"
    with pytest.raises(TemporaryDeliveryError) as excinfo:
        SlackTransport().post(url, slack_payload(make_content()))
    assert "secret" not in str(excinfo.value)
    assert "127.0.0.1" in str(excinfo.value)


def test_slow_webhook_times_out_as_temporary(webhook_server, make_content):
    webhook_server.delay = 1.0
    with pytest.raises(TemporaryDeliveryError, match="timed out"):
        SlackTransport(timeout=0.2).post(
            webhook_server.base_url + SECRET_PATH, slack_payload(make_content())
        )


@pytest.mark.parametrize(
    "url", ["not a url", "ftp://hooks.example.com/x", "https://", "/services/x", "http://[::1/x"]
)
def test_bad_webhook_url_is_permanent(url, make_content):
    with pytest.raises(PermanentDeliveryError):
        SlackTransport().post(url, slack_payload(make_content()))
