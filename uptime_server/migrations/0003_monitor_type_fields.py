"""0003: monitors get the fields of the tcp, udp, dns and ping types.

``tls`` (tcp), ``send`` and ``expect`` (tcp, udp), ``query_name``,
``record_type``, ``resolver``, ``expected_rcode``, ``expected_values`` (dns),
``count`` and ``max_packet_loss`` (ping): nullable, except ``tls`` which
existing rows get as false. Adding columns needs no table rebuild on SQLite.
"""

from __future__ import annotations

import peewee

from uptime_server.migrations import run_ddl

_COLUMNS = (
    ("send", "TEXT", "TEXT"),
    ("expect", "TEXT", "TEXT"),
    ("query_name", "TEXT", "TEXT"),
    ("record_type", "VARCHAR(8)", "VARCHAR(8)"),
    ("resolver", "VARCHAR(300)", "VARCHAR(300)"),
    ("expected_rcode", "VARCHAR(16)", "VARCHAR(16)"),
    ("expected_values", "TEXT", "TEXT"),
    ("count", "INTEGER", "INTEGER"),
    ("max_packet_loss", "REAL", "REAL"),
)

SQLITE = (
    'ALTER TABLE "monitors" ADD COLUMN "tls" INTEGER NOT NULL DEFAULT 0',
    *(f'ALTER TABLE "monitors" ADD COLUMN "{name}" {sqlite}' for name, sqlite, _ in _COLUMNS),
)
POSTGRESQL = (
    'ALTER TABLE "monitors" ADD COLUMN "tls" BOOLEAN NOT NULL DEFAULT false',
    *(f'ALTER TABLE "monitors" ADD COLUMN "{name}" {pg}' for name, _, pg in _COLUMNS),
)


def up(db: peewee.Database) -> None:
    run_ddl(db, sqlite=SQLITE, postgresql=POSTGRESQL)
