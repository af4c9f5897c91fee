"""Where sessions are kept: one 0600 file per server in a 0700 config dir.

The config dir is ``UPTIME_CONFIG_DIR`` > ``$XDG_CONFIG_HOME/uptime`` > the
platform's user config dir. Each server's session lives in
``sessions/<host>-<port>-<hash>.json``: readable at a glance, unique per
normalised server URL. Tokens are never printed.

Which credential a command uses (``select``): ``UPTIME_TOKEN`` (an API token,
sent as a bearer) > ``UPTIME_SESSION`` (a session token, sent as the cookie)
> the saved session of the server.

The default team of each server (``uptime teams switch``) lives apart from the
sessions, in ``teams.json`` (0600) in the config dir: ``{server URL: slug}``.
It outlives a logout and also applies to UPTIME_TOKEN and UPTIME_SESSION.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import platformdirs

DEFAULT_SERVER = "http://127.0.0.1:8080"
TOKEN_ENV = "UPTIME_TOKEN"
SESSION_ENV = "UPTIME_SESSION"
TEAM_ENV = "UPTIME_TEAM"
TEAMS_FILE = "teams.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class BadServerUrl(ValueError):
    """The server URL is not an absolute http(s) URL."""


@dataclass
class Credentials:
    server: str
    session: str
    expires_at: str | None = None
    provider: str | None = None
    user: dict[str, Any] = field(default_factory=dict)
    saved_at: str = ""

    def __repr__(self) -> str:  # never show the token, not even in a traceback
        return f"Credentials(server={self.server!r}, user={self.user.get('email')!r})"


@dataclass(frozen=True)
class Credential:
    """What a request authenticates with: an API token (bearer) or a session (cookie)."""

    kind: Literal["token", "session"]
    value: str = field(repr=False)
    source: str  # the environment variable, or "saved" for the credentials file


def env_value(name: str) -> str | None:
    return os.environ.get(name, "").strip() or None


def select(server: str, directory: Path | None = None) -> Credential | None:
    """UPTIME_TOKEN, else UPTIME_SESSION, else the saved session of *server*."""
    token = env_value(TOKEN_ENV)
    if token:
        return Credential("token", token, TOKEN_ENV)
    session = env_value(SESSION_ENV)
    if session:
        return Credential("session", session, SESSION_ENV)
    saved = load(server, directory)
    return Credential("session", saved.session, "saved") if saved and saved.session else None


def config_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("UPTIME_CONFIG_DIR"):
        return Path(env["UPTIME_CONFIG_DIR"])
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "uptime"
    return Path(platformdirs.user_config_dir("uptime", appauthor=False))


def normalise_server(url: str) -> str:
    """``HTTP://Host:80/`` → ``http://host``; raises BadServerUrl for non-http URLs."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadServerUrl(f"expected an http(s) URL like {DEFAULT_SERVER}, got {url!r}")
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        raise BadServerUrl(f"bad port in {url!r}") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path.rstrip("/"), "", ""))


def credentials_path(server: str, directory: Path | None = None) -> Path:
    server = normalise_server(server)
    parts = urlsplit(server)
    port = parts.port or {"http": 80, "https": 443}[parts.scheme]
    readable = _UNSAFE.sub("_", f"{parts.hostname}-{port}").strip("_")
    digest = hashlib.sha256(server.encode()).hexdigest()[:8]
    return (directory or config_dir()) / "sessions" / f"{readable}-{digest}.json"


def save(creds: Credentials, directory: Path | None = None) -> Path:
    """Write atomically with mode 0600 inside 0700 directories."""
    creds.server = normalise_server(creds.server)
    creds.saved_at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    path = credentials_path(creds.server, directory)
    _private_dir(path.parent.parent, tighten=False)
    _private_dir(path.parent, tighten=True)
    _write_private(path, asdict(creds))
    return path


def _write_private(path: Path, value: Any) -> None:
    """Write *value* as JSON to *path* atomically, with mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)  # O_CREAT's mode does not apply to a leftover file
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def load(server: str, directory: Path | None = None) -> Credentials | None:
    return _read(credentials_path(server, directory))


def delete(server: str, directory: Path | None = None) -> bool:
    try:
        credentials_path(server, directory).unlink()
    except FileNotFoundError:
        return False
    return True


def default_server(directory: Path | None = None) -> str | None:
    """The server of the most recent saved login, if any."""
    folder = (directory or config_dir()) / "sessions"
    if not folder.is_dir():
        return None
    saved = [c for c in (_read(p) for p in folder.glob("*.json")) if c is not None]
    if not saved:
        return None
    return max(saved, key=lambda c: c.saved_at).server


# -- the default team of each server ------------------------------------------


def teams_path(directory: Path | None = None) -> Path:
    return (directory or config_dir()) / TEAMS_FILE


def saved_team(server: str, directory: Path | None = None) -> str | None:
    """The team saved by ``uptime teams switch`` for *server*, if any."""
    team = _read_teams(teams_path(directory)).get(normalise_server(server))
    return team if isinstance(team, str) and team else None


def save_team(server: str, team: str | None, directory: Path | None = None) -> Path:
    """Make *team* the default of *server* (None forgets it); the file stays 0600."""
    path = teams_path(directory)
    teams = _read_teams(path)
    server = normalise_server(server)
    if team:
        teams[server] = team
    else:
        teams.pop(server, None)
    _private_dir(path.parent, tighten=False)
    _write_private(path, dict(sorted(teams.items())))
    return path


def _read_teams(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _read(path: Path) -> Credentials | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Credentials(**{k: raw[k] for k in raw if k in Credentials.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def _private_dir(path: Path, *, tighten: bool) -> None:
    """Create *path* as 0700; an existing dir is tightened only if it is ours alone.

    The config dir may be one the user named (UPTIME_CONFIG_DIR), so it is
    left alone when it already exists; the ``sessions`` dir inside is ours.
    """
    existed = path.is_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if tighten or not existed:
        # mkdir's mode is masked by the umask, and ignored for an existing dir.
        os.chmod(path, 0o700)
