"""SQL reaches the database only through ``uptime_server/db/`` and modules named ``*_sql.py``.

Everywhere else the way in is the peewee builder, ``db.Prepared`` or
``db.bulk``: no module imports the driver (sqlite3, psycopg), opens a
cursor, calls ``execute_sql`` or holds the text of an SQL statement.
``migrations/`` is exempt: frozen DDL, one file per step.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "uptime_server"
EXEMPT_DIRS = {"db", "migrations"}
DRIVERS = {"sqlite3", "psycopg", "psycopg2"}
CALLS = {"execute_sql", "cursor"}

# The start of a statement, in capitals as this code writes SQL (prose that
# begins "Select …" or "Update …" is not one).
STATEMENT = re.compile(
    r"""^\s*\(?\s*(
        SELECT\s+\S
      | INSERT\s+(OR\s+\w+\s+)?INTO\b
      | UPDATE\s+\S+\s+(AS\s+\S+\s+)?SET\b
      | DELETE\s+FROM\b
      | WITH\s+(RECURSIVE\s+)?\w+\s+(\([^)]*\)\s+)?AS\b
      | CREATE\s+(TABLE|(UNIQUE\s+)?INDEX|VIEW|TRIGGER)\b
      | DROP\s+(TABLE|INDEX|VIEW|TRIGGER)\b
      | ALTER\s+TABLE\b
      | PRAGMA\s+\w
      | LOCK\s+TABLE\b
    )""",
    re.VERBOSE,
)


def placed(path: Path) -> bool:
    """Whether *path* may hold SQL: it is in ``db/``, ``migrations/`` or a ``*_sql.py``."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] in EXEMPT_DIRS or path.name.endswith("_sql.py")


def findings(source: str, name: str) -> list[str]:
    """What in *source* (a module outside the exempt places) reaches SQL directly."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in CALLS:
                found.append(f"{name}:{node.lineno}: calls {called}()")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for module in modules:
                if module.split(".")[0] in DRIVERS:
                    found.append(f"{name}:{node.lineno}: imports {module}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and STATEMENT.match(node.value)
        ):
            found.append(f"{name}:{node.lineno}: SQL text {node.value[:50]!r}")
    return found


def test_sql_lives_only_in_db_and_sql_modules() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not placed(path):
            found += findings(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    assert found == [], "\n".join(found)


def test_the_check_sees_each_way_around_the_db_package() -> None:
    # Each line alone, as it would sit in a view module, is a finding.
    for line in (
        'database.execute_sql("SELECT 1")',
        "db.cursor()",
        "import sqlite3",
        "from psycopg import sql",
        "import psycopg2.extras",
        'QUERY = "UPDATE monitors SET paused = ? WHERE id = ?"',
        "QUERY = f\"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES (?)\"",
        'QUERY = "WITH due AS (SELECT 1) DELETE FROM runs"',
        'QUERY = "DELETE FROM runs WHERE id = ?"',
    ):
        assert findings(line, "api/monitors.py"), line
    # Prose and peewee's builder are not.
    for line in (
        '"""Select the monitors to update, then update them."""',
        "Monitor.select().where(Monitor.id == 1)",
        'message = "Update failed: try again"',
    ):
        assert not findings(line, "api/monitors.py"), line
