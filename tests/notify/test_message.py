from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from email import policy
from email.parser import BytesParser

import pytest

from uptime_server.notify.message import (
    build_email,
    format_duration,
    format_utc,
    notification_message,
    redact_text,
    redact_url,
    single_line,
    slack_payload,
    subject,
    text_body,
)
from uptime_server.notify.outbox import content_from_json, content_to_json

RECOVERED = datetime(2024, 5, 1, 12, 4, 12, tzinfo=UTC)


def recovery(make_content, **overrides):
    values = dict(
        kind="recovery",
        error="",
        status_code=200,
        response_time=87,
        resolved_at=RECOVERED,
        duration_seconds=252,
        notification_id=43,
    )
    values.update(overrides)
    return make_content(**values)


def parse(msg):
    return BytesParser(policy=policy.default).parsebytes(msg.as_bytes())


# --- format_duration / format_utc ----------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "0s"),
        (45, "45s"),
        (60, "1m"),
        (252, "4m 12s"),
        (3600, "1h"),
        (7380, "2h 3m"),
        (7399, "2h 3m"),  # seconds are dropped once hours show
        (86400, "1d"),
        (93784, "1d 2h"),
        (90061, "1d 1h"),
        (45.9, "45s"),
        (-5, "0s"),
    ],
)
def test_format_duration(seconds, expected):
    assert format_duration(seconds) == expected


def test_format_utc_converts_to_z():
    paris = timezone(timedelta(hours=2))
    assert format_utc(datetime(2024, 5, 1, 14, 0, 5, 999, tzinfo=paris)) == "2024-05-01T12:00:05Z"
    assert format_utc(datetime(2024, 5, 1, 12, 0)) == "2024-05-01T12:00:00Z"  # naive = UTC
    assert format_utc(None) == "-"


# --- notification_message ----------------------------------------------------------


def test_notification_message_matches_the_documented_examples():
    down = notification_message("downtime", "api-prod", "expected status in [200], got 503", None)
    assert down == "api-prod is DOWN: expected status in [200], got 503"
    assert (
        notification_message("recovery", "api-prod", "", 252) == "api-prod is UP again after 4m 12s"
    )


def test_notification_message_without_error_or_duration():
    assert notification_message("downtime", "web", "", None) == "web is DOWN"
    assert notification_message("recovery", "web", "", None) == "web is UP again"


def test_notification_message_rejects_unknown_kind():
    with pytest.raises(ValueError):
        notification_message("escalation", "web", "", None)


# --- redaction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/health", "https://example.com/health"),
        ("https://admin:s3cret@example.com/h?q=1#f", "https://***:***@example.com/h?q=1#f"),
        ("http://token@example.com:8080/", "http://***@example.com:8080/"),
        ("http://u:p@ss@host/x", "http://***:***@host/x"),  # unescaped @ in the password
        ("http://u:pw@[::1]:8080/x", "http://***:***@[::1]:8080/x"),
        ("https://example.com/path@not-userinfo", "https://example.com/path@not-userinfo"),
        ("http://u:pw@[::1/x", "http://***@[::1/x"),  # unparseable: still scrubbed
    ],
)
def test_redact_url(url, expected):
    assert redact_url(url) == expected


def test_redact_text_scrubs_urls_inside_messages():
    text = "connect to https://bob:hunter2@db.example.com:5432/x failed"
    assert redact_text(text) == "connect to https://***@db.example.com:5432/x failed"


@pytest.mark.parametrize(
    "name", ["a\r\nb", "a\nb", "a\rb", "a\x0bb", "a\x0cb", "a\x1cb", "a\x85b", "a\u2028b", "a \t b"]
)
def test_single_line_removes_every_line_break(name):
    assert single_line(name) == "a b"


# --- subject and body ---------------------------------------------------------------


def test_subject(make_content):
    assert subject(make_content()) == "[Uptime] DOWN: api-prod"
    assert subject(recovery(make_content)) == "[Uptime] UP: api-prod"


def test_subject_is_one_line_whatever_the_name(make_content):
    content = make_content(monitor_name="evil\r\nBcc: attacker@example.com\u2028\x00x")
    assert subject(content) == "[Uptime] DOWN: evil Bcc: attacker@example.com x"


def test_downtime_body_has_every_field(make_content):
    body = text_body(make_content())
    assert body.startswith("api-prod is DOWN: expected status in [200], got 503\n")
    assert "Monitor:       api-prod\n" in body
    assert "URL:           https://api.example.com/health\n" in body
    assert "Error:         expected status in [200], got 503\n" in body
    assert "Status code:   503\n" in body
    assert "Response time: 1234 ms\n" in body
    assert "Started at:    2024-05-01T12:00:00Z\n" in body
    assert "Resolved at" not in body
    assert "Downtime" not in body


def test_recovery_body_has_duration_and_resolution_time(make_content):
    body = text_body(recovery(make_content))
    assert body.startswith("api-prod is UP again after 4m 12s\n")
    assert "Resolved at:   2024-05-01T12:04:12Z\n" in body
    assert "Downtime:      4m 12s (252 s)\n" in body
    assert "Status code:   200\n" in body


def test_body_for_a_timeout_without_status_code(make_content):
    body = text_body(make_content(status_code=None, response_time=None, error="timed out"))
    assert "Status code:   -\n" in body
    assert "Response time: -\n" in body


def test_body_redacts_credentials_in_url_and_error(make_content):
    content = make_content(
        monitor_url="https://admin:s3cret@example.com/health",
        error="GET https://admin:s3cret@example.com/health: connection reset",
    )
    body = text_body(content)
    assert "s3cret" not in body
    assert "https://***:***@example.com/health" in body


def test_body_error_cannot_forge_lines(make_content):
    body = text_body(make_content(error="boom\nStatus code:   200"))
    assert "\nStatus code:   200" not in body
    assert "Error:         boom Status code: 200\n" in body


# --- build_email ------------------------------------------------------------------------


def test_build_email_headers(make_content):
    msg = build_email(
        make_content(),
        sender="Uptime <uptime@example.com>",
        recipients=["ops@example.com", "dev@example.com"],
        message_id="<uptime-outbox-7@uptime.local>",
    )
    parsed = parse(msg)
    assert parsed["From"] == "Uptime <uptime@example.com>"
    assert parsed["To"] == "ops@example.com, dev@example.com"
    assert parsed["Subject"] == "[Uptime] DOWN: api-prod"
    assert parsed["Message-ID"] == "<uptime-outbox-7@uptime.local>"
    assert parsed["Date"].datetime == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert parsed.get_content_type() == "text/plain"
    assert parsed.get_content().replace("\r\n", "\n") == text_body(make_content())


def test_build_email_is_deterministic_and_crlf(make_content):
    kwargs = dict(sender="u@example.com", recipients=["o@example.com"], message_id="<a@b>")
    first = build_email(make_content(), **kwargs).as_bytes()
    assert first == build_email(make_content(), **kwargs).as_bytes()
    assert b"\r\n" in first and b"\n" not in first.replace(b"\r\n", b"")


def test_build_email_date_of_recovery_is_recovery_time(make_content):
    msg = build_email(
        recovery(make_content),
        sender="u@example.com",
        recipients=["o@example.com"],
        message_id="<a@b>",
    )
    assert parse(msg)["Date"].datetime == RECOVERED


def test_build_email_encodes_non_ascii_names(make_content):
    content = make_content(monitor_name="Café — prod ✓")
    msg = build_email(
        content, sender="u@example.com", recipients=["o@example.com"], message_id="<a@b>"
    )
    raw = msg.as_bytes()
    raw.decode("ascii")  # RFC 2047 / transfer encoding keeps the wire ASCII
    parsed = parse(msg)
    assert parsed["Subject"] == "[Uptime] DOWN: Café — prod ✓"
    assert "Café — prod ✓ is DOWN" in parsed.get_content()


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(recipients=[]),
        dict(recipients=["ops@example.com\r\nBcc: x@evil.com"]),
        dict(recipients=["a@example.com, b@evil.com"]),
        dict(sender="u@example.com\nBcc: x@evil.com"),
        dict(message_id="no-brackets@x"),
        dict(message_id="<a@b>\r\nBcc: x@evil.com"),
        dict(message_id="<a b@c>"),
    ],
)
def test_build_email_rejects_header_injection_in_its_arguments(make_content, kwargs):
    args = dict(sender="u@example.com", recipients=["o@example.com"], message_id="<a@b>")
    args.update(kwargs)
    with pytest.raises(ValueError):
        build_email(make_content(), **args)


# --- Slack payload -------------------------------------------------------------------------


def test_slack_payload_is_the_email_text(make_content):
    content = recovery(make_content)
    assert slack_payload(content) == {"text": text_body(content)}


def test_slack_payload_escapes_markup(make_content):
    text = slack_payload(make_content(monitor_name="<!channel> & co"))["text"]
    assert "<!channel>" not in text
    assert text.startswith("&lt;!channel&gt; &amp; co is DOWN")


def cert_alert(make_content, days_left=7, threshold=7, **overrides):
    values = dict(
        kind="cert_expiry",
        monitor_url="https://user:pw@shop.example:8443/health",
        error="",
        status_code=None,
        response_time=None,
        cert_not_after=datetime(2024, 5, 8, 12, 0, 0, tzinfo=UTC),
        cert_serial="4F2A09",
        cert_days_left=days_left,
        cert_threshold=threshold,
    )
    values.update(overrides)
    return make_content(**values)


@pytest.mark.parametrize(
    ("days", "threshold", "expected"),
    [
        (7, 7, "[Uptime] Certificate for api-prod expires in 7 days"),
        (2, 3, "[Uptime] Certificate for api-prod expires in 3 days"),  # named by the threshold
        (1, 1, "[Uptime] Certificate for api-prod expires in 1 day"),
        (0, 1, "[Uptime] Certificate for api-prod has expired"),
    ],
)
def test_cert_expiry_subject(make_content, days, threshold, expected):
    assert subject(cert_alert(make_content, days, threshold)) == expected


def test_cert_expiry_body_names_the_certificate(make_content):
    body = text_body(cert_alert(make_content))
    lines = body.splitlines()
    assert lines[0] == "Certificate for api-prod expires in 7 days"
    assert "Host:         shop.example" in lines
    assert "Not after:    2024-05-08T12:00:00Z" in lines
    assert "Serial:       4F2A09" in lines
    assert "Days left:    7" in lines
    assert "Threshold:    7 days" in lines
    assert "URL:          https://***:***@shop.example:8443/health" in lines
    assert "Status:" not in body and "Error:" not in body


def test_cert_expiry_email_round_trips_through_the_outbox(make_content):
    content = cert_alert(make_content)
    assert content_from_json(content_to_json(content)) == content
    msg = parse(
        build_email(
            content,
            sender="u@example.com",
            recipients=["o@example.com"],
            message_id="<a@example.com>",
        )
    )
    assert msg["Subject"] == "[Uptime] Certificate for api-prod expires in 7 days"


# --- noise control's kinds (docs/alerts.md) ---------------------------------------------


@pytest.mark.parametrize(
    ("kind", "error", "duration", "subject_line", "message", "status"),
    [
        (
            "reminder",
            "expected status in [200], got 503",
            3600,
            "[Uptime] STILL DOWN: api-prod",
            "api-prod is still DOWN after 1h: expected status in [200], got 503",
            "DOWN",
        ),
        (
            "flapping",
            "",
            0,
            "[Uptime] FLAPPING: api-prod",
            "api-prod is flapping: alerts are held until it settles",
            "FLAPPING",
        ),
        (
            "flapping_settled",
            "",
            900,
            "[Uptime] SETTLED UP: api-prod",
            "api-prod stopped flapping and is UP",
            "UP",
        ),
        (
            "flapping_settled",
            "timed out",
            900,
            "[Uptime] SETTLED DOWN: api-prod",
            "api-prod stopped flapping and is DOWN: timed out",
            "DOWN",
        ),
    ],
)
def test_noise_kinds_render(make_content, kind, error, duration, subject_line, message, status):
    content = make_content(kind=kind, error=error, duration_seconds=duration, resolved_at=RECOVERED)
    assert subject(content) == subject_line
    assert notification_message(kind, "api-prod", error, duration) == message
    body = text_body(content)
    assert body.startswith(message + "\n")
    assert f"Status:        {status}\n" in body
