"""Reading monitor files (uptime_cli.monitor_files): no server involved."""

from __future__ import annotations

from pathlib import Path

import pytest

from uptime_cli.monitor_files import FileProblems, check_allowed, dump, load


def problems(
    tmp_path: Path,
    text: str,
    env: dict[str, str] | None = None,
    allowed: frozenset[str] = frozenset(),
) -> list[str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(FileProblems) as caught:
        load([path], env or {}, allowed=allowed)
    return [p.removeprefix(f"{path}:") for p in caught.value.problems]


def test_it_lists_every_structural_problem_with_its_line(tmp_path: Path) -> None:
    text = "extra: 1\nmonitors:\n  - 3\n  - name: a\n    alerts: no\n"
    assert problems(tmp_path, text) == [
        "1: unknown top-level field 'extra' (expected defaults, monitors)",
        "3: monitors[0]: expected a mapping of monitor fields",
        "5: alerts: must be a mapping of settings",
    ]
    assert problems(tmp_path, "- name: a\n") == ["1: expected a mapping with `monitors:` (a list)"]
    assert problems(tmp_path, "defaults: 1\nmonitors: {}\n") == [
        "1: defaults: expected a mapping",
        "2: monitors: expected a list",
    ]


def test_bad_references_are_named(tmp_path: Path) -> None:
    text = "monitors:\n  - name: a\n    body: '${}'\n    send: 'x ${OPEN'\n    expect: ${GONE}\n"
    found = problems(tmp_path, text)
    assert found[0].startswith("3: '${}' is not a variable reference")
    assert found[1].startswith("4: '${' is not a variable reference")
    assert found[2] == (
        "5: ${GONE} is not expanded: name it UPTIME_VAR_GONE, or allow it with --env GONE"
    )
    assert problems(tmp_path, text.replace("GONE", "UPTIME_VAR_GONE"))[2] == (
        "5: environment variable UPTIME_VAR_GONE is not set"
    )


def test_only_uptime_var_and_named_variables_are_read(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "monitors:\n  - name: ${UPTIME_VAR_NAME}\n    body: 'a ${HOME} b'\n    timeout: ${T}\n"
    )
    env = {"UPTIME_VAR_NAME": "api", "HOME": "/home/me", "T": "12"}
    (entry,) = load([path], env, allowed={"HOME", "T"})
    assert entry.fields == {"name": "api", "body": "a /home/me b", "timeout": 12}
    assert entry.from_env == {"api", "/home/me", "12"}
    with pytest.raises(FileProblems) as caught:
        load([path], env, allowed={"T"})
    assert caught.value.problems == [
        f"{path}:3: ${{HOME}} is not expanded: name it UPTIME_VAR_HOME, or allow it with --env HOME"
    ]


@pytest.mark.parametrize("name", ["UPTIME_TOKEN", "UPTIME_SESSION", "UPTIME_SERVER"])
def test_the_clis_credentials_are_never_read(tmp_path: Path, name: str) -> None:
    text = f"monitors:\n  - name: a\n    url: 'http://127.0.0.1:9/?t=${{{name}}}'\n"
    found = problems(tmp_path, text, {name: "secret"}, allowed=frozenset({name}))
    assert found == [f"3: ${{{name}}} is never expanded: it holds the CLI's own credentials"]
    assert check_allowed([name, "OK_NAME", "9bad"]) == [
        f"--env {name}: never expanded in monitor files (UPTIME_PING_URL, UPTIME_SERVER, "
        "UPTIME_SESSION, UPTIME_TOKEN are the CLI's own credentials)",
        "--env '9bad': not a variable name",
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("defaults: &d {timeout: 9}\nmonitors:\n  - name: a\n    <<: *d\n", 4),
        ("monitors:\n  - &a {name: a}\n  - *a\n", 3),
        ("monitors: &loop\n  - *loop\n", 2),  # an alias of its own parent
    ],
)
def test_yaml_aliases_are_refused_at_their_line(tmp_path: Path, text: str, line: int) -> None:
    (found,) = problems(tmp_path, text)
    assert found.startswith(f"{line}: YAML aliases (*")
    assert "not allowed in monitor files" in found


def test_a_billion_laughs_is_refused_at_its_first_alias(tmp_path: Path) -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 10)]
    text = "\n".join(lines) + "\nmonitors: [{name: *a9}]\n"
    (found,) = problems(tmp_path, text)
    assert found.startswith("2: YAML aliases (*a0)")


def test_nesting_beyond_the_stack_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("monitors: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(FileProblems) as caught:
        load([path], {})
    assert caught.value.problems == [f"{path}: nested too deeply to be a monitors file"]


def test_defaults_merge_alerts_setting_by_setting_and_fields_keep_their_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "defaults:\n  timeout: 9\n  alerts: {alert_threshold: 2, email_enabled: false}\n"
        "monitors:\n  - name: a\n    alerts:\n      alert_threshold: 4\n"
    )
    (entry,) = load([path], {})
    assert entry.fields == {
        "timeout": 9,
        "name": "a",
        "alerts": {"alert_threshold": 4, "email_enabled": False},
    }
    assert (entry.place_of("timeout").line, entry.place_of("alerts.alert_threshold").line) == (2, 7)
    assert entry.place_of("alerts.email_enabled").line == 3  # from the defaults
    assert entry.place_of("url").line == 5  # not written: the entry


def test_a_dump_reads_back_the_same_entries(tmp_path: Path) -> None:
    entries = [{"name": "a ${x}", "type": "http", "headers": {"K": "$${y}"}, "tags": ["b"]}]
    for as_json, name in ((False, "m.yaml"), (True, "m.json")):
        path = tmp_path / name
        path.write_text(dump(entries, as_json=as_json))
        assert [e.fields for e in load([path], {})] == entries
