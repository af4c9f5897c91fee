from __future__ import annotations

import logging
import time
from email import policy
from email.parser import BytesParser

import pytest

from tests.notify.conftest import SMTP_PASSWORD, SMTP_USER
from uptime_server.notify.message import build_email
from uptime_server.notify.transports import (
    FileTransport,
    PermanentDeliveryError,
    SmtpSettings,
    SmtpTransport,
    TemporaryDeliveryError,
    email_transport,
)

SENDER = "uptime@example.com"
RECIPIENT = "ops@example.com"


def settings_for(server, **overrides):
    values = dict(
        host=server.host,
        port=server.port,
        tls="none",
        mail_from=SENDER,
        timeout=5,
        helo_name="uptime.test",
    )
    values.update(overrides)
    return SmtpSettings(**values)


def email_for(content, recipients=(RECIPIENT,), outbox_id=1):
    return build_email(
        content,
        sender=SENDER,
        recipients=list(recipients),
        message_id=f"<uptime-outbox-{outbox_id}@uptime.local>",
    )


def parse(raw: bytes):
    return BytesParser(policy=policy.default).parsebytes(raw)


# --- delivery ---------------------------------------------------------------------------


def test_it_delivers_over_plain_smtp(smtp_server, make_content):
    SmtpTransport(settings_for(smtp_server)).send(email_for(make_content()))

    [received] = smtp_server.handler.received
    assert received.mail_from == SENDER
    assert received.rcpt_tos == [RECIPIENT]
    assert received.tls is False
    parsed = parse(received.content)
    assert parsed["Subject"] == "[Uptime] DOWN: api-prod"
    assert parsed["Message-ID"] == "<uptime-outbox-1@uptime.local>"
    assert "expected status in [200], got 503" in parsed.get_content()


def test_it_delivers_to_every_recipient_in_one_message(smtp_server, make_content):
    msg = email_for(make_content(), recipients=["a@example.com", "b@example.com"])
    SmtpTransport(settings_for(smtp_server)).send(msg)

    [received] = smtp_server.handler.received
    assert received.rcpt_tos == ["a@example.com", "b@example.com"]


def test_it_uses_starttls(start_smtp, client_tls_context, make_content):
    server = start_smtp(tls="starttls")
    transport = SmtpTransport(settings_for(server, tls="starttls"), ssl_context=client_tls_context)
    transport.send(email_for(make_content()))

    [received] = server.handler.received
    assert received.tls is True


def test_starttls_honours_ssl_cert_file(start_smtp, ca, tmp_path, monkeypatch, make_content):
    # No injected context: the default one must pick up SSL_CERT_FILE.
    server = start_smtp(tls="starttls")
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    SmtpTransport(settings_for(server, tls="starttls")).send(email_for(make_content()))

    assert server.handler.received[0].tls is True


def test_it_uses_implicit_tls(start_smtp, client_tls_context, make_content):
    server = start_smtp(tls="ssl")
    transport = SmtpTransport(settings_for(server, tls="ssl"), ssl_context=client_tls_context)
    transport.send(email_for(make_content()))

    assert server.handler.received[0].tls is True


def test_untrusted_certificate_is_temporary(start_smtp, make_content, monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "empty.pem"))
    server = start_smtp(tls="ssl")
    with pytest.raises(TemporaryDeliveryError, match="CERTIFICATE_VERIFY_FAILED|certificate"):
        SmtpTransport(settings_for(server, tls="ssl")).send(email_for(make_content()))


def test_starttls_required_but_not_offered_is_permanent(smtp_server, make_content):
    transport = SmtpTransport(settings_for(smtp_server, tls="starttls"))
    with pytest.raises(PermanentDeliveryError, match="STARTTLS"):
        transport.send(email_for(make_content()))
    assert smtp_server.handler.received == []


# --- authentication -------------------------------------------------------------------------


def test_it_logs_in(start_smtp, make_content):
    server = start_smtp(auth=True)
    settings = settings_for(server, username=SMTP_USER, password=SMTP_PASSWORD)
    SmtpTransport(settings).send(email_for(make_content()))

    assert server.handler.received[0].login == SMTP_USER.encode()


def test_it_logs_in_after_starttls(start_smtp, client_tls_context, make_content):
    server = start_smtp(tls="starttls", auth=True)
    settings = settings_for(server, tls="starttls", username=SMTP_USER, password=SMTP_PASSWORD)
    SmtpTransport(settings, ssl_context=client_tls_context).send(email_for(make_content()))

    [received] = server.handler.received
    assert received.tls is True
    assert received.login == SMTP_USER.encode()


def test_wrong_password_is_permanent_and_never_logged(start_smtp, make_content, caplog):
    caplog.set_level(logging.DEBUG)
    server = start_smtp(auth=True)
    settings = settings_for(server, username=SMTP_USER, password="wrong-Pa55word")
    with pytest.raises(PermanentDeliveryError) as excinfo:
        SmtpTransport(settings).send(email_for(make_content()))

    assert excinfo.value.code == 535
    assert "wrong-Pa55word" not in str(excinfo.value)
    assert "wrong-Pa55word" not in caplog.text
    assert "wrong-Pa55word" not in repr(settings)
    assert server.handler.received == []


def test_successful_login_does_not_log_the_password(start_smtp, make_content, caplog):
    caplog.set_level(logging.DEBUG)
    server = start_smtp(auth=True)
    settings = settings_for(server, username=SMTP_USER, password=SMTP_PASSWORD)
    SmtpTransport(settings).send(email_for(make_content()))
    assert SMTP_PASSWORD not in caplog.text


# --- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", ["rcpt_reply", "data_reply"])
@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("451 4.3.0 Mailbox temporarily unavailable", TemporaryDeliveryError),
        ("550 5.1.1 No such user", PermanentDeliveryError),
    ],
    ids=["451-is-temporary", "550-is-permanent"],
)
def test_a_refusal_is_typed_by_its_code(smtp_server, make_content, stage, reply, error):
    setattr(smtp_server.handler, stage, reply)
    with pytest.raises(error) as excinfo:
        SmtpTransport(settings_for(smtp_server)).send(email_for(make_content()))
    assert excinfo.value.code == int(reply[:3])
    assert reply[:3] in str(excinfo.value)
    assert smtp_server.handler.received == []


def test_partly_refused_recipients_still_count_as_sent(smtp_server, make_content, caplog):
    # Retrying would send a duplicate to the ones who did get it.
    smtp_server.handler.refuse["gone@example.com"] = "550 5.1.1 No such user"
    msg = email_for(make_content(), recipients=[RECIPIENT, "gone@example.com"])
    SmtpTransport(settings_for(smtp_server)).send(msg)

    [received] = smtp_server.handler.received
    assert received.rcpt_tos == [RECIPIENT]
    assert "gone@example.com" in caplog.text


def test_all_refused_with_one_451_is_temporary(smtp_server, make_content):
    smtp_server.handler.refuse.update(
        {"a@example.com": "550 5.1.1 No such user", "b@example.com": "451 4.3.0 Later"}
    )
    msg = email_for(make_content(), recipients=["a@example.com", "b@example.com"])
    with pytest.raises(TemporaryDeliveryError, match="refused all recipients"):
        SmtpTransport(settings_for(smtp_server)).send(msg)


def test_a_failed_quit_after_delivery_is_not_an_error(smtp_server, make_content):
    # Reporting it would make the loop retry and send a duplicate.
    smtp_server.handler.quit_reply = "500 5.0.0 confused"
    SmtpTransport(settings_for(smtp_server)).send(email_for(make_content()))
    assert len(smtp_server.handler.received) == 1


def test_connection_refused_is_temporary(closed_port, make_content):
    settings = SmtpSettings(host="127.0.0.1", port=closed_port, tls="none", mail_from=SENDER)
    with pytest.raises(TemporaryDeliveryError, match="ConnectionRefused"):
        SmtpTransport(settings).send(email_for(make_content()))


def test_silent_server_times_out_as_temporary(silent_port, make_content):
    settings = SmtpSettings(
        host="127.0.0.1", port=silent_port, tls="none", mail_from=SENDER, timeout=0.3
    )
    started = time.monotonic()
    with pytest.raises(TemporaryDeliveryError, match="timed out"):
        SmtpTransport(settings).send(email_for(make_content()))
    assert time.monotonic() - started < 5


# --- header injection ---------------------------------------------------------------------------


def test_crlf_in_monitor_name_cannot_add_recipients_or_headers(smtp_server, make_content):
    content = make_content(
        monitor_name="evil\r\nBcc: attacker@example.com",
        error="boom\r\nBcc: attacker2@example.com\r\n\r\nfake body",
    )
    SmtpTransport(settings_for(smtp_server)).send(email_for(content))

    [received] = smtp_server.handler.received
    assert received.rcpt_tos == [RECIPIENT]
    parsed = parse(received.content)
    assert parsed["Bcc"] is None
    assert parsed["Subject"] == "[Uptime] DOWN: evil Bcc: attacker@example.com"
    assert "\n" not in str(parsed["Subject"])
    header_block = received.content.split(b"\r\n\r\n", 1)[0]
    assert not any(line.lower().startswith(b"bcc") for line in header_block.split(b"\r\n"))


def test_credentials_in_url_are_redacted_in_the_sent_email(smtp_server, make_content):
    content = make_content(monitor_url="https://admin:s3cret@example.com/health")
    SmtpTransport(settings_for(smtp_server)).send(email_for(content))

    [received] = smtp_server.handler.received
    assert b"s3cret" not in received.content
    assert "https://***:***@example.com/health" in parse(received.content).get_content()


# --- settings and factory -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [dict(tls="tls"), dict(port=0), dict(port=70000), dict(timeout=0), dict(password="x")],
)
def test_settings_reject_nonsense(kwargs):
    with pytest.raises(ValueError):
        SmtpSettings(host="mail.example.com", **kwargs)


def test_email_transport_falls_back_to_files_without_a_host(tmp_path):
    assert isinstance(email_transport(None, tmp_path), FileTransport)
    assert isinstance(email_transport(SmtpSettings(host=""), tmp_path), FileTransport)
    assert isinstance(email_transport(SmtpSettings(host="mx.example.com"), tmp_path), SmtpTransport)
