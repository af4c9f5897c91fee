"""``uptime apply`` and ``uptime export`` against a live daemon: monitors as code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import Cli, describe
from uptime_cli.commands.apply import masked_plan

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
      Authorization: Bearer ${UPTIME_VAR_API_TOKEN}
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
    return cli("apply", *args, env={"UPTIME_VAR_API_TOKEN": token})


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
    assert api["headers"] == {"Authorization": "Bearer s3cret"}  # ${UPTIME_VAR_API_TOKEN}
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
    # Values from the environment are masked, the old one as the new.
    assert '    headers: {"Authorization": "Bearer ***"} → {"Authorization": "Bearer ***"}' in (
        result.stdout
    )
    assert "s3cret" not in result.stdout + result.stderr
    assert "rotated" not in result.stdout + result.stderr
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
    result = cli("apply", "-f", str(path), env={"UPTIME_VAR_API_TOKEN": None})
    assert result.exit_code == 2, describe(result)
    assert f"{path}:12: environment variable UPTIME_VAR_API_TOKEN is not set" in result.stderr
    assert monitors(alice) == {}


def test_a_doubled_dollar_is_a_literal_and_plain_values_keep_their_type(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    text = (
        "monitors:\n  - name: lit\n    type: http\n    url: http://127.0.0.1:9/\n"
        "    expected_content: 'cost $${PRICE}'\n    timeout: ${TIMEOUT}\n"
    )
    path = write(tmp_path, "m.yaml", text)
    result = cli("apply", "-f", str(path), "--env", "TIMEOUT", env={"TIMEOUT": "12"})
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
    env = {"UPTIME_VAR_API_HEALTH_TOKEN": "t"}
    result = cli("apply", "-f", str(path), "--dry-run", env=env)
    assert result.exit_code == 0, describe(result)
    assert "Plan: 4 to create, 0 to update, 0 to delete, 0 unchanged." in result.stdout
    assert monitors(alice) == {}


def test_yaml_aliases_are_refused_with_exit_2_and_one_line(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    looped = write(tmp_path, "loop.yaml", "monitors: &all\n  - name: a\n    tags: *all\n")
    result = cli("apply", "-f", str(looped))
    assert result.exit_code == 2, describe(result)
    assert isinstance(result.exception, SystemExit)  # not a crash
    assert "Traceback" not in result.stdout + result.stderr
    said = " ".join(result.stderr.split())  # rich wraps at the terminal's width
    assert said.startswith(
        f"uptime: {looped}:3: YAML aliases (*all) are not allowed in monitor files: write the "
        "value out, or put what entries share in defaults: uptime: 1 problem(s) in the files"
    )
    laughs = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    laughs += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 12)]
    bomb = write(tmp_path, "bomb.yaml", "\n".join(laughs) + "\nmonitors: [{name: *a11}]\n")
    result = cli("apply", "-f", str(bomb))
    assert result.exit_code == 2, describe(result)
    assert f"{bomb}:2: YAML aliases (*a0)" in result.stderr
    assert monitors(alice) == {}


def test_other_variables_need_env_and_credentials_are_never_read(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    text = FILE.replace("${UPTIME_VAR_API_TOKEN}", "${API_TOKEN}")
    path = write(tmp_path, "monitors.yaml", text)
    refused = cli("apply", "-f", str(path), env={"API_TOKEN": "s3cret"})
    assert refused.exit_code == 2, describe(refused)
    assert (
        f"{path}:12: ${{API_TOKEN}} is not expanded: name it UPTIME_VAR_API_TOKEN, "
        "or allow it with --env API_TOKEN"
    ) in refused.stderr
    assert monitors(alice) == {}
    allowed = cli("apply", "-f", str(path), "--env", "API_TOKEN", env={"API_TOKEN": "s3cret"})
    assert allowed.exit_code == 0, describe(allowed)
    assert monitors(alice)["api-prod"]["headers"] == {"Authorization": "Bearer s3cret"}
    # The CLI's own token, server and session: never, even when named.
    for name in ("UPTIME_TOKEN", "UPTIME_SESSION", "UPTIME_SERVER"):
        stolen = write(tmp_path, "stolen.yaml", FILE.replace("UPTIME_VAR_API_TOKEN", name))
        result = cli("apply", "-f", str(stolen))
        assert result.exit_code == 2, describe(result)
        assert f"${{{name}}} is never expanded" in result.stderr
        named = cli("apply", "-f", str(stolen), "--env", name)
        assert named.exit_code == 2, describe(named)
        assert f"--env {name}: never expanded in monitor files" in named.stderr
        assert alice.token not in result.stdout + result.stderr + named.stdout + named.stderr
    assert set(monitors(alice)) == {"api-prod", "db"}
    assert monitors(alice)["api-prod"]["headers"] == {"Authorization": "Bearer s3cret"}


def test_the_plan_and_the_output_mask_values_from_the_environment(
    cli: Cli, alice: Any, tmp_path: Path
) -> None:
    text = FILE.replace("name: db", "name: db-${UPTIME_VAR_SITE}")
    path = write(tmp_path, "monitors.yaml", text)
    env = {"UPTIME_VAR_API_TOKEN": "tok-4f9a2c", "UPTIME_VAR_SITE": "berlin"}
    dry = cli("apply", "-f", str(path), "--dry-run", env=env)
    assert dry.exit_code == 0, describe(dry)
    assert '    headers: {"Authorization": "Bearer ***"}' in dry.stdout
    assert "+ create db-***" in dry.stdout
    as_json = cli("apply", "-f", str(path), "--json", env=env)
    assert as_json.exit_code == 0, describe(as_json)
    data = json.loads(as_json.stdout)
    assert data["applied"] is True
    changes = {c["field"]: c["new"] for c in data["plan"][0]["changes"]}
    assert changes["headers"] == {"Authorization": "Bearer ***"}
    assert data["plan"][1]["name"] == "db-***"
    for result in (dry, as_json):
        assert "tok-4f9a2c" not in result.stdout + result.stderr
        assert "berlin" not in result.stdout + result.stderr
    # What was stored is the real value: only the output is masked.
    made = monitors(alice)
    assert made["api-prod"]["headers"] == {"Authorization": "Bearer tok-4f9a2c"}
    assert "db-berlin" in made


@pytest.mark.parametrize(
    ("old", "new", "shown_old", "shown_new"),
    [
        ("Bearer old-tok", "Bearer new-tok", "Bearer ***", "Bearer ***"),
        ("Basic xyz", "Bearer new-tok", "***", "Bearer ***"),
        ({"A": "k1", "B": "plain"}, {"A": "new-tok", "B": "plain"}, {"A": "***", "B": "plain"},
         {"A": "***", "B": "plain"}),
        (30, 12, "***", "***"),  # timeout: ${UPTIME_VAR_T} read "12"
        (None, "x new-tok y", None, "x *** y"),
        (["a@x", "old@x"], ["a@x", "new-tok"], ["a@x", "***"], ["a@x", "***"]),
        ("left alone", "no secret", "left alone", "no secret"),
    ],
)  # fmt: skip
def test_masking_covers_the_old_value_where_the_new_one_is_secret(
    old: Any, new: Any, shown_old: Any, shown_new: Any
) -> None:
    result = {
        "plan": [{"name": "n", "key": None, "changes": [{"field": "f", "old": old, "new": new}]}]
    }
    masked = masked_plan(result, frozenset({"new-tok", "12"}))
    assert masked["plan"][0]["changes"] == [{"field": "f", "old": shown_old, "new": shown_new}]
    assert result["plan"][0]["changes"][0]["old"] == old  # the server's answer is left as it is
