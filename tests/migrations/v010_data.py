"""Rows a v0.1.0 installation holds, written against the v0.1.0 schema (not the models).

Every table has rows, with the awkward values: NULLs, booleans both ways,
JSON text, non-ASCII text, microseconds, 64-bit numbers, gaps in the ids (a
deleted monitor), an open incident under the one-active index, an email
waiting under a lease and one sent.
"""

from __future__ import annotations

from typing import Any

import peewee

T0 = "2026-11-01 08:00:00"
T1 = "2026-11-01 08:05:00.123456"
T2 = "2026-11-01 09:00:00"

MONITOR: dict[str, Any] = {
    "id": 1,
    "user_id": 1,
    "name": "api-prod",
    "url": "https://api.example.com/health",
    "type": "https",
    "method": "GET",
    "expected_status": "[200]",
    "timeout": 30,
    "check_interval": 60,
    "retry_count": 2,
    "locations": '["local","eu"]',
    "follow_redirects": True,
    "verify_ssl": False,
    "headers": '{"X-Token":"s3cr\\u00e9t"}',
    "body": None,
    "expected_content": "ok",
    "excluded_content": None,
    "json_path": "$.status",
    "expected_json_value": "up",
    "degraded_response_time": 800,
    "status": "offline",
    "paused": False,
    "paused_at": None,
    "pause_reason": None,
    "response_time": None,
    "status_code": 503,
    "last_error": "expected status in [200], got 503",
    "last_check": T2,
    "last_success": T0,
    "last_failure": T2,
    "cert_expires_at": T2,
    "consecutive_failures": 4,
    "offline_since": T1,
    "alerts_suppressed": False,
    "state_version": 17,
    "created_at": T0,
    "updated_at": T1,
}

ROWS: dict[str, list[dict[str, Any]]] = {
    "users": [
        {
            "id": 1,
            "email": "alice@example.com",
            "name": "Alice",
            "avatar_url": None,
            "created_at": T0,
            "last_login": T1,
        },
        {
            "id": 2,
            "email": "bob@example.com",
            "name": "Bób ✓",
            "avatar_url": "https://x/a.png",
            "created_at": T0,
            "last_login": None,
        },
    ],
    "identities": [
        {
            "id": 1,
            "user_id": 1,
            "provider": "github",
            "subject": "1001",
            "email": "alice@example.com",
            "created_at": T0,
        },
        {
            "id": 2,
            "user_id": 2,
            "provider": "google",
            "subject": "sub-2",
            "email": None,
            "created_at": T0,
        },
    ],
    "sessions": [
        {
            "id": 1,
            "user_id": 1,
            "token_hash": "a" * 64,
            "provider": "github",
            "created_at": T0,
            "expires_at": T2,
        },
        {
            "id": 3,
            "user_id": 2,
            "token_hash": "b" * 64,
            "provider": "local",
            "created_at": T0,
            "expires_at": T2,
        },
    ],
    "oauth_states": [
        {
            "id": 1,
            "state_hash": "c" * 64,
            "provider": "github",
            "browser_hash": "d" * 64,
            "nonce": None,
            "next_url": "/",
            "cli_redirect": None,
            "cli_challenge": None,
            "link_user_id": 1,
            "created_at": T0,
            "expires_at": T2,
            "used_at": None,
        },
    ],
    "cli_tickets": [
        {
            "id": 1,
            "ticket_hash": "e" * 64,
            "user_id": 2,
            "provider": "google",
            "challenge": "f" * 43,
            "expires_at": T2,
            "used_at": T1,
        },
    ],
    "monitors": [
        MONITOR,
        # Monitor 2 was deleted; 5 is the newest.
        {
            **MONITOR,
            "id": 5,
            "user_id": 2,
            "name": "dns ✓",
            "url": None,
            "type": "dns",
            "status": "pending",
            "paused": True,
            "paused_at": T1,
            "pause_reason": "maintenance",
            "expected_status": "[200,201]",
            "locations": '["local"]',
            "verify_ssl": True,
            "consecutive_failures": 0,
            "offline_since": None,
            "state_version": 0,
            "degraded_response_time": None,
            "created_at": T1,
        },
    ],
    "monitor_locations": [
        {
            "id": 1,
            "monitor_id": 1,
            "location": "local",
            "next_check_at": T2,
            "lease_owner": "host-1-ab/7",
            "lease_expires_at": T2,
            "last_status": "offline",
            "last_checked_at": T2,
        },
        {
            "id": 2,
            "monitor_id": 1,
            "location": "eu",
            "next_check_at": T2,
            "lease_owner": None,
            "lease_expires_at": None,
            "last_status": None,
            "last_checked_at": None,
        },
    ],
    "alert_settings": [
        {
            "monitor_id": 1,
            "email_enabled": True,
            "email_recipients": '["ops@example.com"]',
            "slack_enabled": True,
            "slack_webhook_url": "https://hooks.example.com/T/1",
            "alert_on_recovery": False,
            "alert_threshold": 3,
        },
        {
            "monitor_id": 5,
            "email_enabled": False,
            "email_recipients": "[]",
            "slack_enabled": False,
            "slack_webhook_url": None,
            "alert_on_recovery": True,
            "alert_threshold": 1,
        },
    ],
    "check_runs": [
        {
            "id": 10,
            "monitor_id": 1,
            "location": "local",
            "checked_at": T0,
            "status": "online",
            "response_time": 120,
            "status_code": 200,
            "error": None,
            "attempts": 1,
        },
        {
            "id": 11,
            "monitor_id": 1,
            "location": "local",
            "checked_at": T1,
            "status": "offline",
            "response_time": None,
            "status_code": 503,
            "error": "expected status in [200], got 503",
            "attempts": 3,
        },
    ],
    "rollups": [
        {
            "monitor_id": 1,
            "resolution": 300,
            "bucket": 1793520000,
            "checks": 2,
            "failed": 1,
            "rt_count": 1,
            "rt_sum": 120,
            "rt_min": 120,
            "rt_max": 120,
            "p95": 120,
            "hist": "[[57,1]]",
        },
        {
            "monitor_id": 1,
            "resolution": 86400,
            "bucket": 1793491200,
            "checks": 2,
            "failed": 1,
            "rt_count": 1,
            "rt_sum": 9007199254740993,
            "rt_min": 120,
            "rt_max": 120,
            "p95": None,
            "hist": "[]",
        },
    ],
    "notifications": [
        {
            "id": 1,
            "monitor_id": 1,
            "user_id": 1,
            "type": "downtime",
            "message": "api-prod is DOWN: timeout after 30s",
            "status": "resolved",
            "started_at": T0,
            "resolved_at": T1,
            "duration": 300,
            "acknowledged": True,
            "acknowledged_at": T1,
            "email_sent_at": T1,
            "error_status_code": None,
            "error_response_time": None,
            "error_message": "timeout after 30s",
            "created_at": T0,
        },
        {
            "id": 2,
            "monitor_id": 1,
            "user_id": 1,
            "type": "downtime",
            "message": "api-prod is DOWN: expected status in [200], got 503",
            "status": "active",
            "started_at": T1,
            "resolved_at": None,
            "duration": None,
            "acknowledged": False,
            "acknowledged_at": None,
            "email_sent_at": None,
            "error_status_code": 503,
            "error_response_time": 45,
            "error_message": "expected status in [200], got 503",
            "created_at": T1,
        },
    ],
    "outbox": [
        {
            "id": 1,
            "notification_id": 1,
            "channel": "email",
            "recipients": '["ops@example.com"]',
            "target": None,
            "subject": "[Uptime] DOWN: api-prod",
            "payload": '{"kind":"downtime"}',
            "message_id": "<uptime-n1-email-0a1b2c3d4e5f@example.com>",
            "status": "sent",
            "attempts": 1,
            "next_attempt_at": T0,
            "last_error": None,
            "sent_at": T1,
            "lease_owner": None,
            "lease_expires_at": None,
            "created_at": T0,
        },
        {
            "id": 2,
            "notification_id": 2,
            "channel": "slack",
            "recipients": "[]",
            "target": "https://hooks.example.com/T/1",
            "subject": "[Uptime] DOWN: api-prod",
            "payload": '{"kind":"downtime"}',
            "message_id": "<uptime-n2-slack-0a1b2c3d4e5f@example.com>",
            "status": "pending",
            "attempts": 3,
            "next_attempt_at": T2,
            "last_error": "HTTP 500",
            "sent_at": None,
            "lease_owner": "host-1-ab",
            "lease_expires_at": T2,
            "created_at": T1,
        },
    ],
}

# Sorted by key, to read a table back in a stable order.
KEYS = {"alert_settings": "monitor_id", "rollups": "monitor_id, resolution, bucket"}


def insert(db: peewee.Database) -> None:
    """Write ``ROWS`` as v0.1.0 would have them (PostgreSQL sequences moved past them)."""
    p = db.param
    for table, rows in ROWS.items():
        for row in rows:
            columns = ", ".join(row)
            marks = ", ".join([p] * len(row))
            db.execute_sql(f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(row.values()))
        if isinstance(db, peewee.PostgresqlDatabase) and "id" in rows[0]:
            # v0.1.0 took these ids from the sequence, which stands at the highest.
            db.execute_sql(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), MAX(id)) FROM {table}"
            )


def read(db: peewee.Database, columns: dict[str, list[str]]) -> dict[str, list[tuple]]:
    """Every row of every v0.1.0 table, as its v0.1.0 *columns* (table → names)."""
    return {
        table: db.execute_sql(
            f"SELECT {', '.join(names)} FROM {table} ORDER BY {KEYS.get(table, 'id')}"
        ).fetchall()
        for table, names in columns.items()
    }
