"""Reading monitor files (uptime_cli.monitor_files): no server involved."""

from __future__ import annotations

from pathlib import Path

import pytest

from uptime_cli.monitor_files import FileProblems, dump, load


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(FileProblems) as caught:
        load([path], env or {})
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
    assert found[2] == "5: environment variable GONE is not set"


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
