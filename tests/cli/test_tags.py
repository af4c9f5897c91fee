"""``--tag`` on ``uptime monitors add|edit|list|bulk`` against a live daemon."""

from __future__ import annotations

from typing import Any

from tests.cli.conftest import Cli, describe


def add(cli: Cli, name: str, *tags: str) -> int:
    opts = [arg for tag in tags for arg in ("--tag", tag)]
    return int(cli.json("monitors", "add", name, "http://127.0.0.1:9/", *opts)["id"])


def listed(cli: Cli, *tags: str) -> list[int]:
    opts = [arg for tag in tags for arg in ("--tag", tag)]
    return [m["id"] for m in cli.json("monitors", "list", *opts)["data"]]


def test_add_and_edit_set_the_tags(cli: Cli, alice: Any) -> None:
    mid = add(cli, "api", "Prod", "web")
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["tags"] == ["prod", "web"]
    cli.ok("monitors", "edit", str(mid), "--tag", "eu")
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["tags"] == ["eu"]
    cli.ok("monitors", "edit", str(mid), "--tag", "")
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["tags"] == []


def test_show_prints_the_tags(cli: Cli) -> None:
    mid = add(cli, "api", "prod")
    assert "prod" in cli.ok("monitors", "show", str(mid)).stdout


def test_list_filters_by_all_tags_given(cli: Cli) -> None:
    both, prod = add(cli, "both", "prod", "web"), add(cli, "prod", "prod")
    add(cli, "none")
    assert listed(cli, "prod") == [both, prod]
    assert listed(cli, "prod", "web") == [both]
    every = cli.json("monitors", "list", "--tag", "web", "--tag", "prod", "--all")
    assert [m["id"] for m in every["data"]] == [both]
    assert every["data"][0]["tags"] == ["prod", "web"]


def test_bulk_by_tag_pauses_only_the_callers_tagged_monitors(cli: Cli, bob_cli: Cli) -> None:
    a, b, other = add(cli, "a", "batch"), add(cli, "b", "batch"), add(cli, "c")
    theirs = add(bob_cli, "theirs", "batch")
    data = cli.json("monitors", "bulk", "pause", "--tag", "batch", "--reason", "maintenance")
    assert data["succeeded"] == [a, b]
    assert [cli.json("monitors", "show", str(m))["paused"] for m in (a, b, other)] == [
        True,
        True,
        False,
    ]
    assert bob_cli.json("monitors", "show", str(theirs))["paused"] is False


def test_bulk_takes_ids_or_a_tag(cli: Cli) -> None:
    mid = add(cli, "a", "t")
    for args in (
        ("monitors", "bulk", "pause"),
        ("monitors", "bulk", "pause", str(mid), "--tag", "t"),
    ):
        result = cli(*args)
        assert result.exit_code == 2, describe(result)
    assert cli.json("monitors", "show", str(mid))["paused"] is False
