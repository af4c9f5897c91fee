"""Nothing that came from a server puts a control character on the terminal.

Names and errors are written straight into the database, as a hostile
co-user or an older server could have left them; the CLI shows them as text.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.cli.conftest import Cli, describe
from tests.notification_rows import add_notification
from uptime_server import db
from uptime_server.models import CheckRun, Monitor

CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # newline ends lines, nothing else
HOSTILE_NAME = "evil\x1b]0;title\x07\x1b[31mred\x9b2J\x7f"
HOSTILE_ERROR = "boom\x1b[2J\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"
MARKUP = "[link=http://evil.example]click[/link]"


@pytest.fixture
def hostile(cli: Cli, alice: Any, clock: Any) -> dict[str, str]:
    monitor_id = cli.json("monitors", "add", "plain", "http://127.0.0.1:9/")["id"]
    with db.database.connection_context():
        Monitor.update(name=HOSTILE_NAME + MARKUP, last_error=HOSTILE_ERROR).where(
            Monitor.id == monitor_id
        ).execute()
        CheckRun.create(
            monitor=monitor_id,
            location="local",
            checked_at=clock.now(),
            status="offline",
            status_code=500,
            attempts=1,
            error=HOSTILE_ERROR,
        )
        note = add_notification(
            monitor_id,
            alice.user.id,
            clock.now(),
            f"{HOSTILE_NAME} is DOWN: {HOSTILE_ERROR}",
            error_message=HOSTILE_ERROR,
        )
    return {"m": str(monitor_id), "n": str(note.id)}


@pytest.mark.parametrize(
    "line",
    [
        "monitors list",
        "monitors show {m}",
        "monitors history {m}",
        "notifications list",
        "notifications active",
        "notifications show {n}",
    ],
)
def test_tables_show_server_text_without_control_characters(
    cli: Cli, hostile: dict[str, str], line: str
) -> None:
    result = cli.ok(*line.format(**hostile).split())
    assert not CONTROL.search(result.stdout + result.stderr), repr(result.stdout)
    assert "evil]0;title[31mred2J" in result.stdout or "boom[2J" in result.stdout
    if "monitors" in line and "history" not in line:
        assert MARKUP in result.stdout  # shown as typed, not read as a rich link


def test_json_output_is_exact_and_escapes_every_control_character(
    cli: Cli, hostile: dict[str, str]
) -> None:
    result = cli.ok("monitors", "show", hostile["m"], "--json")
    assert not CONTROL.search(result.stdout), repr(result.stdout)
    data = json.loads(result.stdout)
    assert data["name"] == HOSTILE_NAME + MARKUP
    assert data["last_error"] == HOSTILE_ERROR


def test_error_lines_from_the_server_are_printable(cli: Cli) -> None:
    # The server names the unknown location it was sent; the CLI prints that line.
    result = cli("monitors", "add", "x", "http://127.0.0.1:9/", "--location", "mars\x1b[2J\x9b")
    assert result.exit_code == 4, describe(result)
    assert "mars[2J" in result.stderr
    assert not CONTROL.search(result.stdout + result.stderr), repr(result.stderr)
