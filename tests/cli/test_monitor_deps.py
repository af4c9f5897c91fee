"""``uptime monitors add|edit --depends-on``, ``monitors deps`` and the blocked mark, live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import Cli, describe
from tests.notification_rows import add_notification
from uptime_server.models import Monitor


def add(cli: Cli, name: str, *opts: str) -> int:
    return int(cli.json("monitors", "add", name, f"http://127.0.0.1:9/{name}", *opts)["id"])


def depends_on(alice: Any, monitor_id: int) -> list[int]:
    return alice.get(f"/api/v1/monitors/{monitor_id}").json["data"]["depends_on"]


def test_add_and_edit_set_replace_and_clear_the_list(cli: Cli, alice: Any) -> None:
    router, db = add(cli, "router"), add(cli, "db")
    web = add(cli, "web", "--depends-on", str(router), "--depends-on", str(db))
    assert depends_on(alice, web) == sorted([router, db])

    cli.ok("monitors", "edit", str(web), "--name", "web2")
    assert depends_on(alice, web) == sorted([router, db])  # not given: unchanged
    cli.ok("monitors", "edit", str(web), "--depends-on", str(db))
    assert depends_on(alice, web) == [db]
    cli.ok("monitors", "edit", str(web), "--no-depends-on")
    assert depends_on(alice, web) == []

    both = cli("monitors", "edit", str(web), "--depends-on", str(db), "--no-depends-on")
    assert both.exit_code == 2 and "not both" in both.stderr


def test_a_cycle_is_refused_with_its_path(cli: Cli, alice: Any) -> None:
    a = add(cli, "a")
    b = add(cli, "b", "--depends-on", str(a))

    result = cli("monitors", "edit", str(a), "--depends-on", str(b))

    assert result.exit_code == 4
    assert f"would make a cycle: {a} → {b} → {a}" in result.stderr


def test_deps_prints_the_tree_and_list_marks_blocked(cli: Cli, alice: Any, clock: Any) -> None:
    router = add(cli, "router")
    db = add(cli, "db", "--depends-on", str(router))
    web = add(cli, "web", "--depends-on", str(db))
    api = add(cli, "api", "--depends-on", str(web))
    Monitor.update(status="offline").where(Monitor.id == router).execute()
    add_notification(router, alice.user.id, clock.now(), "router down")

    text = cli.ok("monitors", "deps", str(web)).stdout
    data = cli.json("monitors", "deps", str(web))
    listed = cli.ok("monitors", "list").stdout

    lines = [line.rstrip() for line in text.splitlines()]
    assert lines == [
        "depends on:",
        f"└─ {db} db  pending (blocked)",
        f"   └─ {router} router  offline",
        f"{web} web  pending (blocked)",
        "needed by:",
        f"└─ {api} api  pending (blocked)",
    ]
    assert data["monitor"] == {"id": web, "name": "web", "status": "pending", "blocked": True}
    assert [p["id"] for p in data["parents"]] == [db]
    assert data["parents"][0]["parents"][0]["id"] == router
    blocked = {line.split()[1] for line in listed.splitlines() if "(blocked)" in line}
    assert blocked == {"db", "web", "api"}
    shown = cli.ok("monitors", "show", str(api)).stdout
    assert f"{router} (down, and it depends on them)" in shown


def test_deps_of_a_monitor_without_dependencies(cli: Cli) -> None:
    alone = add(cli, "alone")

    assert "no dependencies either way" in cli.ok("monitors", "deps", str(alone)).stdout


DEPS_FILE = """\
monitors:
  - name: router
    type: http
    url: http://127.0.0.1:9/router
  - key: db
    name: database
    type: tcp
    url: tcp://127.0.0.1:5432
    depends_on: [router]
  - name: web
    type: http
    url: http://127.0.0.1:9/web
    depends_on: [db, router]
"""


def test_apply_and_export_carry_depends_on_by_key_and_name(
    cli: Cli, bob_cli: Cli, alice: Any, bob: Any, tmp_path: Path
) -> None:
    path = tmp_path / "monitors.yaml"
    path.write_text(DEPS_FILE)

    cli.ok("apply", "-f", str(path))

    ids = {m["name"]: m["id"] for m in alice.get("/api/v1/monitors").json["data"]}
    assert depends_on(alice, ids["database"]) == [ids["router"]]
    assert depends_on(alice, ids["web"]) == sorted([ids["router"], ids["database"]])
    exported = cli.ok("export").stdout
    by_name = {e["name"]: e for e in yaml.safe_load(exported)["monitors"]}
    assert by_name["web"]["depends_on"] == ["router", "db"]  # by parent id: keys, else names
    again = cli("apply", "-f", str(path))
    assert "No changes" in again.stderr, describe(again)
    copy = tmp_path / "exported.yaml"
    copy.write_text(exported)
    bob_cli.ok("apply", "-f", str(copy))
    assert bob_cli.ok("export").stdout == exported


def test_a_bad_reference_in_a_file_is_reported_at_its_line(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    path = tmp_path / "monitors.yaml"
    path.write_text(DEPS_FILE.replace("depends_on: [db, router]", "depends_on: [nowhere]"))

    result = cli("apply", "-f", str(path))

    assert result.exit_code == 2, describe(result)
    line = DEPS_FILE.splitlines().index("    depends_on: [db, router]") + 1
    assert f"{path}:{line}: name 'web': depends_on:" in result.stderr
    assert "'nowhere'" in result.stderr
    assert alice.get("/api/v1/monitors").json["data"] == []
