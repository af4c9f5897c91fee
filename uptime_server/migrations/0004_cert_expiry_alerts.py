"""0004: certificate-expiry alerts.

- ``alert_settings.cert_expiry_days``: the thresholds in days, JSON; existing
  rows get the default ``[14,7,3,1]``.
- ``monitors.cert_serial`` (the serial of the certificate last seen, beside
  ``cert_expires_at``) and ``monitors.cert_alerted_days`` (the smallest
  threshold already alerted for that certificate): nullable.
- ``notifications.cert_alert_key``: one certificate's one threshold
  (``monitor:serial:not-after:days``), unique, so no two writers can alert it
  twice; null for every other notification (NULLs never collide).

Adding columns and an index needs no table rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_INDEX = 'CREATE UNIQUE INDEX "notifications_cert_alert_key" ON "notifications" ("cert_alert_key")'

SQLITE = (
    'ALTER TABLE "alert_settings" ADD COLUMN "cert_expiry_days" TEXT NOT NULL '
    "DEFAULT '[14,7,3,1]'",
    'ALTER TABLE "monitors" ADD COLUMN "cert_serial" VARCHAR(64)',
    'ALTER TABLE "monitors" ADD COLUMN "cert_alerted_days" INTEGER',
    'ALTER TABLE "notifications" ADD COLUMN "cert_alert_key" VARCHAR(255)',
    _INDEX,
)
POSTGRESQL = SQLITE  # the same types on both dialects


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
