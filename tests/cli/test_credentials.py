"""Where sessions are kept: config dir precedence, one 0600 file per server, never shown."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from uptime_cli import credentials
from uptime_cli.credentials import Credentials


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_config_dir_precedence(tmp_path: Path) -> None:
    explicit, xdg, home = tmp_path / "explicit", tmp_path / "xdg", tmp_path / "home"
    env = {"UPTIME_CONFIG_DIR": str(explicit), "XDG_CONFIG_HOME": str(xdg), "HOME": str(home)}
    assert credentials.config_dir(env) == explicit
    del env["UPTIME_CONFIG_DIR"]
    assert credentials.config_dir(env) == xdg / "uptime"


def test_config_dir_falls_back_to_the_platform_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UPTIME_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    found = credentials.config_dir()
    assert found.name == "uptime"
    assert str(found).startswith(str(tmp_path))


@pytest.mark.parametrize(
    "given, normal",
    [
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
        ("HTTP://Example.COM:80", "http://example.com"),
        ("https://example.com:443/uptime/", "https://example.com/uptime"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_server_urls_are_normalised(given: str, normal: str) -> None:
    assert credentials.normalise_server(given) == normal


@pytest.mark.parametrize("bad", ["ftp://example.com", "example.com", "http://", "http://h:x"])
def test_bad_server_urls_are_refused(bad: str) -> None:
    with pytest.raises(credentials.BadServerUrl):
        credentials.normalise_server(bad)


def test_one_file_per_server(tmp_path: Path) -> None:
    a = credentials.credentials_path("http://127.0.0.1:8080", tmp_path)
    b = credentials.credentials_path("http://127.0.0.1:8081", tmp_path)
    c = credentials.credentials_path("HTTP://127.0.0.1:8080/", tmp_path)
    assert a != b and a == c
    assert a.name.startswith("127.0.0.1-8080-") and a.suffix == ".json"


def test_files_are_0600_in_0700_dirs_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = credentials.save(Credentials("http://127.0.0.1:8080", "tok"), tmp_path / "cfg")
    finally:
        os.umask(old)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(tmp_path / "cfg") == 0o700


def test_an_existing_loose_file_is_replaced_by_a_private_one(tmp_path: Path) -> None:
    path = credentials.credentials_path("http://127.0.0.1:8080", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    path.chmod(0o644)
    path.parent.chmod(0o755)
    credentials.save(Credentials("http://127.0.0.1:8080", "tok"), tmp_path)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert credentials.load("http://127.0.0.1:8080", tmp_path).session == "tok"  # type: ignore[union-attr]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_a_config_dir_the_user_made_keeps_its_mode(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    credentials.save(Credentials("http://127.0.0.1:8080", "tok"), mine)
    assert mode(mine) == 0o755
    assert mode(mine / "sessions") == 0o700


def test_default_server_is_the_newest_login(tmp_path: Path) -> None:
    assert credentials.default_server(tmp_path) is None
    credentials.save(Credentials("http://127.0.0.1:8080", "a"), tmp_path)
    credentials.save(Credentials("https://uptime.example.com", "b"), tmp_path)
    assert credentials.default_server(tmp_path) == "https://uptime.example.com"
    credentials.save(Credentials("http://127.0.0.1:8080", "c"), tmp_path)
    assert credentials.default_server(tmp_path) == "http://127.0.0.1:8080"


def test_a_corrupt_file_is_ignored(tmp_path: Path) -> None:
    path = credentials.credentials_path("http://127.0.0.1:8080", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert credentials.load("http://127.0.0.1:8080", tmp_path) is None
    assert credentials.default_server(tmp_path) is None


def test_delete(tmp_path: Path) -> None:
    credentials.save(Credentials("http://127.0.0.1:8080", "a"), tmp_path)
    assert credentials.delete("http://127.0.0.1:8080", tmp_path) is True
    assert credentials.delete("http://127.0.0.1:8080", tmp_path) is False


def test_default_teams_are_kept_per_server_in_one_private_file(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = credentials.save_team("HTTP://Host:80/", "ops", tmp_path)
        credentials.save_team("https://other.example", "dev", tmp_path)
    finally:
        os.umask(old)
    assert path == tmp_path / "teams.json" and mode(path) == 0o600
    assert credentials.saved_team("http://host", tmp_path) == "ops"
    assert credentials.saved_team("https://other.example/", tmp_path) == "dev"
    assert credentials.saved_team("http://elsewhere", tmp_path) is None
    credentials.save_team("http://host", None, tmp_path)
    assert credentials.saved_team("http://host", tmp_path) is None
    assert credentials.saved_team("https://other.example", tmp_path) == "dev"


def test_a_corrupt_teams_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    (tmp_path / "teams.json").write_text("[not a map")
    assert credentials.saved_team("http://host", tmp_path) is None
    credentials.save_team("http://host", "ops", tmp_path)
    assert credentials.saved_team("http://host", tmp_path) == "ops"


def test_the_token_is_not_in_the_repr() -> None:
    creds = Credentials("http://h", "secret-token", user={"email": "a@example.com"})
    assert "secret-token" not in repr(creds)
    assert "a@example.com" in repr(creds)


def test_the_credential_is_the_token_then_the_session_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = "http://127.0.0.1:8080"
    monkeypatch.delenv("UPTIME_TOKEN", raising=False)
    monkeypatch.delenv("UPTIME_SESSION", raising=False)
    assert credentials.select(server, tmp_path) is None
    credentials.save(Credentials(server=server, session="saved-session"), tmp_path)
    assert credentials.select(server, tmp_path) == credentials.Credential(
        "session", "saved-session", "saved"
    )
    monkeypatch.setenv("UPTIME_SESSION", " env-session ")
    chosen = credentials.select(server, tmp_path)
    assert chosen == credentials.Credential("session", "env-session", "UPTIME_SESSION")
    monkeypatch.setenv("UPTIME_TOKEN", "upt_secret")
    chosen = credentials.select(server, tmp_path)
    assert chosen == credentials.Credential("token", "upt_secret", "UPTIME_TOKEN")
    assert "upt_secret" not in repr(chosen)
    monkeypatch.setenv("UPTIME_TOKEN", "  ")  # blank: not set
    assert credentials.select(server, tmp_path).kind == "session"
