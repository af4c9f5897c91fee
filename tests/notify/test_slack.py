from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from uptime_server.notify.message import slack_payload
from uptime_server.notify.transports import (
    PermanentDeliveryError,
    SlackTransport,
    TemporaryDeliveryError,
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
    assert str(excinfo.value) == f"Slack webhook 127.0.0.1 answered {status}"
    assert "secret" not in str(excinfo.value)


@pytest.mark.parametrize("status", [500, 403])
def test_an_error_never_quotes_the_body(webhook_server, make_content, status):
    # A "Slack" URL pointed at an internal service: its answer stays there.
    webhook_server.status = status
    webhook_server.reply = "db_password=hunter2"
    with pytest.raises((PermanentDeliveryError, TemporaryDeliveryError)) as excinfo:
        SlackTransport().post(webhook_server.base_url + SECRET_PATH, slack_payload(make_content()))
    assert str(excinfo.value) == f"Slack webhook 127.0.0.1 answered {status}"


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


# --- the connection goes where the guard said (issue: DNS rebinding, proxies) ------------


def test_it_dials_the_address_it_checked(webhook_server, fake_dns, make_content):
    # A rebinding resolver: a second lookup would answer 127.0.0.2, where
    # nothing listens (the receiver is bound to 127.0.0.1 only).
    fake_dns.answers["hooks.test"] = [["127.0.0.1"], ["127.0.0.2"]]
    url = f"http://hooks.test:{webhook_server.port}{SECRET_PATH}"
    SlackTransport(block_private=False).post(url, slack_payload(make_content()))

    [request] = webhook_server.requests
    assert request["host"] == f"hooks.test:{webhook_server.port}"
    assert fake_dns.lookups == ["hooks.test"]


def test_the_transport_applies_the_guard(webhook_server, fake_dns, make_content):
    fake_dns.answers["hooks.test"] = [["127.0.0.1"]]
    url = f"http://hooks.test:{webhook_server.port}{SECRET_PATH}"
    with pytest.raises(PermanentDeliveryError, match="target address not allowed"):
        SlackTransport(block_private=True).post(url, slack_payload(make_content()))
    assert webhook_server.requests == []


def test_tls_speaks_to_the_name_not_the_address(
    tls_webhook_server, fake_dns, client_tls_context, make_content
):
    # The certificate names hooks.test only: SNI and verification must use the
    # URL's name although the socket goes to the checked address.
    fake_dns.answers["hooks.test"] = [["127.0.0.1"], ["127.0.0.2"]]
    url = f"https://hooks.test:{tls_webhook_server.port}{SECRET_PATH}"
    SlackTransport(ssl_context=client_tls_context).post(url, slack_payload(make_content()))

    [request] = tls_webhook_server.requests
    assert request["host"] == f"hooks.test:{tls_webhook_server.port}"
    assert request["path"] == SECRET_PATH


def test_a_certificate_for_another_name_is_refused(
    tls_webhook_server, client_tls_context, make_content
):
    url = f"https://127.0.0.1:{tls_webhook_server.port}{SECRET_PATH}"
    with pytest.raises(TemporaryDeliveryError, match="TLS certificate verify failed") as excinfo:
        SlackTransport(ssl_context=client_tls_context).post(url, slack_payload(make_content()))
    assert "secret" not in str(excinfo.value)
    assert tls_webhook_server.requests == []


@pytest.fixture
def proxy_trap() -> Iterator[socket.socket]:
    """A listening socket standing in for a proxy; connections wait in its backlog."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def _trapped(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_proxy_settings_from_the_environment_are_ignored(
    webhook_server, proxy_trap, monkeypatch, make_content
):
    proxy = f"http://127.0.0.1:{proxy_trap.getsockname()[1]}"
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, proxy)
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)

    SlackTransport(timeout=2).post(webhook_server.base_url + SECRET_PATH, {"text": "hi"})

    assert len(webhook_server.requests) == 1
    assert not _trapped(proxy_trap)


def test_netrc_credentials_are_not_sent(webhook_server, tmp_path, monkeypatch, make_content):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(netrc.read_text())
    (tmp_path / ".netrc").chmod(0o600)

    SlackTransport().post(webhook_server.base_url + SECRET_PATH, {"text": "hi"})

    [request] = webhook_server.requests
    assert request["authorization"] is None
