"""``uptime apply`` and ``uptime export`` against a live daemon: monitors as code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import Cli, describe

FILE = """\
defaults:
  check_interval: 120
  alerts:
    alert_on_recovery: false

monitors:
  - key: api
    name: api-prod
    type: https
    url: https://127.0.0.1:9/health
    headers:
      Authorization: Bearer ${API_TOKEN}
    tags: [prod, web]
    alerts:
      alert_threshold: 3
  - name: db
    type: tcp
    url: tcp://127.0.0.1:5432
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def monitors(user: Any) -> dict[str, dict[str, Any]]:
    listed = user.get("/api/v1/monitors?limit=100").json["data"]
    return {m["name"]: user.get(f"/api/v1/monitors/{m['id']}").json["data"] for m in listed}


def apply(cli: Cli, *args: str, token: str = "s3cret") -> Any:
    return cli("apply", *args, env={"API_TOKEN": token})


def test_it_creates_the_monitors_of_a_file(cli: Cli, alice: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    result = apply(cli, "-f", str(path))
    assert result.exit_code == 0, describe(result)
    assert "+ create api-prod (key api)" in result.stdout
    assert "+ create db" in result.stdout
    assert "Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged." in result.stdout
    made = monitors(alice)
    api, db = made["api-prod"], made["db"]
    assert (api["key"], api["tags"], api["check_interval"]) == ("api", ["prod", "web"], 120)
    assert api["headers"] == {"Authorization": "Bearer s3cret"}  # ${API_TOKEN}
    assert (db["type"], db["check_interval"]) == ("tcp", 120)  # defaults reach every monitor
    alerts = alice.get(f"/api/v1/monitors/{api['id']}/alerts").json["data"]
    assert (alerts["alert_threshold"], alerts["alert_on_recovery"]) == (3, False)


def test_a_second_apply_reports_no_changes(cli: Cli, alice: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    assert apply(cli, "-f", str(path)).exit_code == 0
    again = apply(cli, "-f", str(path))
    assert again.exit_code == 0, describe(again)
    assert "No changes" in again.stderr
    assert "Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged." in again.stdout
    assert "create" not in again.stdout.replace("to create", "")


def test_it_updates_what_differs_field_by_field(cli: Cli, alice: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    assert apply(cli, "-f", str(path)).exit_code == 0
    write(tmp_path, "monitors.yaml", FILE.replace("alert_threshold: 3", "alert_threshold: 5"))
    result = apply(cli, "-f", str(path), token="rotated")
    assert result.exit_code == 0, describe(result)
    assert "~ update api-prod (key api)" in result.stdout
    assert (
        '    headers: {"Authorization": "Bearer s3cret"} → {"Authorization": "Bearer rotated"}'
        in (result.stdout)
    )
    assert "    alerts.alert_threshold: 3 → 5" in result.stdout
    api = monitors(alice)["api-prod"]
    assert api["headers"] == {"Authorization": "Bearer rotated"}
    assert alice.get(f"/api/v1/monitors/{api['id']}/alerts").json["data"]["alert_threshold"] == 5


def test_extras_are_reported_and_pruned_only_with_prune(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    assert apply(cli, "-f", str(path)).exit_code == 0
    only_api = FILE.split("  - name: db")[0]
    write(tmp_path, "monitors.yaml", only_api)
    kept = apply(cli, "-f", str(path))
    assert kept.exit_code == 0, describe(kept)
    assert "! not in the files db" in kept.stdout
    assert set(monitors(alice)) == {"api-prod", "db"}
    pruned = apply(cli, "-f", str(path), "--prune")
    assert pruned.exit_code == 0, describe(pruned)
    assert "- delete db" in pruned.stdout
    assert set(monitors(alice)) == {"api-prod"}


def test_a_dry_run_prints_the_plan_and_changes_nothing(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    result = apply(cli, "-f", str(path), "--dry-run")
    assert result.exit_code == 0, describe(result)
    assert "+ create api-prod" in result.stdout
    assert "Dry run" in result.stderr
    assert monitors(alice) == {}


def test_an_invalid_file_names_file_line_and_field_and_applies_nothing(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    alice.post(
        "/api/v1/monitors", json={"name": "old", "type": "http", "url": "http://127.0.0.1:9/"}
    )
    bad = FILE.replace("type: tcp\n", "type: tcp\n    timeout: 1\n").replace(
        "alert_threshold: 3", "alert_threshold: 0"
    )
    path = write(tmp_path, "monitors.yaml", bad)
    result = apply(cli, "-f", str(path), "--prune")
    assert result.exit_code == 2, describe(result)
    lines = bad.splitlines()
    timeout_line = lines.index("    timeout: 1") + 1
    threshold_line = lines.index("      alert_threshold: 0") + 1
    assert f"{path}:{timeout_line}: name 'db': timeout:" in result.stderr
    assert f"{path}:{threshold_line}: key 'api': alerts.alert_threshold:" in result.stderr
    assert "nothing was applied" in result.stderr
    assert set(monitors(alice)) == {"old"}


def test_a_structural_problem_is_found_before_the_server_is_asked(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    path = write(tmp_path, "m.yaml", "monitors:\n  - type: http\n    url: http://127.0.0.1:9/\n")
    result = apply(cli, "-f", str(path))
    assert result.exit_code == 2, describe(result)
    assert f"{path}:2: name: is required" in result.stderr
    broken = write(tmp_path, "broken.yaml", "monitors:\n  - name: x\n   bad: [\n")
    result = apply(cli, "-f", str(broken))
    assert result.exit_code == 2, describe(result)
    assert f"{broken}:3:" in result.stderr
    assert monitors(alice) == {}


def test_an_unset_variable_is_an_error_naming_it(cli: Cli, alice: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    result = cli("apply", "-f", str(path), env={"API_TOKEN": None})
    assert result.exit_code == 2, describe(result)
    assert f"{path}:12: environment variable API_TOKEN is not set" in result.stderr
    assert monitors(alice) == {}


def test_a_doubled_dollar_is_a_literal_and_plain_values_keep_their_type(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    text = (
        "monitors:\n  - name: lit\n    type: http\n    url: http://127.0.0.1:9/\n"
        "    expected_content: 'cost $${PRICE}'\n    timeout: ${TIMEOUT}\n"
    )
    path = write(tmp_path, "m.yaml", text)
    result = cli("apply", "-f", str(path), env={"TIMEOUT": "12"})
    assert result.exit_code == 0, describe(result)
    made = monitors(alice)["lit"]
    assert (made["expected_content"], made["timeout"]) == ("cost ${PRICE}", 12)


def test_duplicate_keys_across_files_name_both_files(cli: Cli, alice: Any, tmp_path: Path) -> None:
    one = write(tmp_path, "one.yaml", FILE)
    two = write(tmp_path, "two.json", json.dumps({"monitors": [{"key": "api", "name": "other"}]}))
    result = apply(cli, "-f", str(one), "-f", str(two))
    assert result.exit_code == 2, describe(result)
    assert "duplicate key 'api'" in result.stderr
    assert str(one) in result.stderr and str(two) in result.stderr
    assert monitors(alice) == {}


def test_a_directory_applies_each_of_its_files(cli: Cli, alice: Any, tmp_path: Path) -> None:
    folder = tmp_path / "monitors"
    folder.mkdir()
    write(folder, "a.yaml", FILE)
    entry = {"name": "json-one", "type": "http", "url": "http://127.0.0.1:9/j"}
    write(folder, "b.json", json.dumps({"monitors": [entry]}, indent="\t"))
    write(folder, "notes.txt", "not a monitors file")
    result = apply(cli, "-f", str(folder))
    assert result.exit_code == 0, describe(result)
    assert set(monitors(alice)) == {"api-prod", "db", "json-one"}


def test_export_then_apply_reproduces_the_monitors_on_an_empty_account(
    cli: Cli, bob_cli: Cli, alice: Any, bob: Any, tmp_path: Path
) -> None:
    assert apply(cli, "-f", str(write(tmp_path, "monitors.yaml", FILE))).exit_code == 0
    alice.post(
        "/api/v1/monitors",
        json={"name": "odd ${x}", "type": "dns", "url": "dns://example.test", "record_type": "MX"},
    )
    exported = cli.ok("export")
    path = write(tmp_path, "exported.yaml", exported.stdout)
    entries = yaml.safe_load(exported.stdout)["monitors"]
    assert [e["name"] for e in entries] == ["api-prod", "db", "odd $${x}"]
    assert "timeout" not in entries[0]  # defaults are left out
    assert entries[0]["alerts"] == {"alert_on_recovery": False, "alert_threshold": 3}

    result = bob_cli("apply", "-f", str(path))
    assert result.exit_code == 0, describe(result)
    assert bob_cli.ok("export").stdout == exported.stdout
    mine, theirs = monitors(alice), monitors(bob)
    assert set(theirs) == {"api-prod", "db", "odd ${x}"}
    assert theirs["api-prod"]["headers"] == mine["api-prod"]["headers"]
    again = bob_cli("apply", "-f", str(path))
    assert "No changes" in again.stderr, describe(again)


def test_export_by_tag_and_as_json(cli: Cli, tmp_path: Path) -> None:
    assert apply(cli, "-f", str(write(tmp_path, "monitors.yaml", FILE))).exit_code == 0
    tagged = json.loads(cli.ok("export", "--tag", "web", "--json").stdout)
    assert [e["name"] for e in tagged["monitors"]] == ["api-prod"]


def test_apply_json_prints_the_servers_plan(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "monitors.yaml", FILE)
    data = json.loads(apply(cli, "-f", str(path), "--json").stdout)
    assert (data["applied"], data["summary"]["create"]) == (True, 2)


def test_the_documented_example_is_a_valid_file(cli: Cli, alice: Any, tmp_path: Path) -> None:
    doc = (Path(__file__).parents[2] / "docs" / "monitors-as-code.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = write(tmp_path, "monitors.yaml", example)
    # A dry run: the server validates every entry and plans; nothing is created or dialled.
    result = cli("apply", "-f", str(path), "--dry-run", env={"API_HEALTH_TOKEN": "t"})
    assert result.exit_code == 0, describe(result)
    assert "Plan: 4 to create, 0 to update, 0 to delete, 0 unchanged." in result.stdout
    assert monitors(alice) == {}
