"""Settings from ``UPTIME_*`` environment variables.

Every variable the daemon reads is parsed here, strictly: a bad value raises
``ConfigError`` whose one-line message names the variable, so start-up stops
with something a person can act on. ``NAME_FILE`` variants read secrets from
files (systemd credentials, Docker secrets).
"""

from __future__ import annotations

import importlib.util
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from uptime_server.files import create_private_file, private_dir, tighten

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class ConfigError(ValueError):
    """A setting has a value the daemon cannot use."""


# UPTIME_GC_THRESHOLD's default: generation 0 at 10,000 objects (gc_policy.py).
DEFAULT_GC_THRESHOLD = (10_000, 10, 10)


@dataclass(frozen=True)
class OAuthProvider:
    """One OAuth2/OIDC provider configured through UPTIME_OAUTH_<NAME>_*."""

    name: str
    client_id: str
    client_secret: str | None = None
    authorize_url: str | None = None
    token_url: str | None = None
    userinfo_url: str | None = None
    scopes: str | None = None
    metadata_url: str | None = None
    emails_url: str | None = None


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    host: str = "127.0.0.1"
    port: int = 8080
    base_url: str = "http://127.0.0.1:8080"
    # Whether UPTIME_BASE_URL gave base_url; if not, it follows where the API
    # listens (listen_url), --host and --port of `server run` included.
    base_url_set: bool = False
    secret_key: str = ""
    session_ttl: int = 14 * 86400
    session_max_age: int = 90 * 86400
    min_check_interval: int = 30
    locations: tuple[str, ...] = ("local",)
    # UPTIME_MAX_MONITORS_PER_TEAM (UPTIME_MAX_MONITORS_PER_USER: its old name).
    max_monitors_per_team: int = 1000
    max_teams_per_user: int = 20
    audit_retention_days: int = 365
    raw_retention_days: int = 30
    max_body_bytes: int = 1024 * 1024
    block_private_targets: bool = False
    # Apprise schemes that open their own sockets (mailto, irc, ...) allowed
    # in apprise channels (docs/channels.md#apprise).
    apprise_allow: tuple[str, ...] = ()
    ca_bundle: str | None = None
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_username: str | None = None
    smtp_password: str | None = None
    smtp_tls: str = "starttls"
    mail_from: str = "uptime@localhost"
    rate_limit: str | None = "600/minute"
    login_rate_limit: str | None = "30/minute"
    # Per heartbeat ping token (one runaway job cannot flood the database).
    ping_rate_limit: str | None = "60/minute"
    # Pings of unknown tokens, per client address (fast_paths.pings.PingLimit).
    unknown_ping_rate_limit: str | None = "60/minute"
    # Per user: test messages of email channels, which leave through the
    # server's own mail relay.
    email_test_rate_limit: str | None = "5/minute"
    # Per probe agent token, on the agent API (claims, leases, results).
    agent_rate_limit: str | None = "1200/minute"
    ratelimit_storage_url: str = "memory://"
    metrics_token: str | None = None
    metrics_refresh_interval: int = 15
    allowed_emails: tuple[str, ...] = ()
    # Addresses whose accounts become admins at sign-in (auth/admins.py), when
    # verified and held by no other account; lower-cased.
    admins: tuple[str, ...] = ()
    oauth_providers: Mapping[str, OAuthProvider] = field(default_factory=dict)
    log_level: str = "INFO"
    http_threads: int = 32
    # API reads let into Flask at once (read_gate.py); 0: no gate.
    api_read_concurrency: int = 0
    test_run_timeout: int = 60
    test_concurrency: int = 4
    test_concurrency_per_user: int = 2
    check_concurrency: int = 200
    lease_seconds: int = 15
    delivery_lease_seconds: int = 120
    shutdown_grace: int = 30
    event_loop: str = "uvloop"  # the probes' event loop: "uvloop" or "asyncio"
    # SO_REUSEPORT on the API's sockets: several daemons share one port.
    reuse_port: bool = False
    # The cycle collector's thresholds (gc_policy.py); None: Python's own.
    gc_threshold: tuple[int, int, int] | None = DEFAULT_GC_THRESHOLD

    @property
    def outbox_dir(self) -> Path:
        return self.data_dir / "outbox"

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)

    def redacted(self) -> dict[str, object]:
        """The settings as a dict safe to log: secrets shown only as set/unset,
        passwords in URLs (database, rate-limit storage) as ``***``."""
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in {"secret_key", "smtp_password", "metrics_token"}:
                value = "<set>" if value else None
            elif f.name in {"database_url", "ratelimit_storage_url"}:
                value = _without_password(value)
            elif f.name == "oauth_providers":
                value = sorted(value)
            out[f.name] = value
        return out


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user_info, host = parts.netloc.rsplit("@", 1)
    user = user_info.split(":", 1)[0]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


EVENT_LOOPS = ("uvloop", "asyncio")  # UPTIME_EVENT_LOOP: the probes' event loop


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read settings from *environ* (default: the process environment)."""
    env = _Env(os.environ if environ is None else environ)
    data_dir = Path(env.str("UPTIME_DATA_DIR") or platformdirs.user_data_dir("uptime"))
    database_url = env.str("UPTIME_DATABASE_URL") or f"sqlite:///{data_dir / 'uptime.db'}"
    _check_database_url(database_url)
    port = env.int("UPTIME_PORT", 8080, lo=0, hi=65535)
    host = env.str("UPTIME_HOST") or "127.0.0.1"
    base_url = (env.str("UPTIME_BASE_URL") or listen_url(host, port)).rstrip("/")
    _check_http_url("UPTIME_BASE_URL", base_url)
    # At least two: one thread must stay free of "test now" runs (see below).
    http_threads = env.int("UPTIME_HTTP_THREADS", 32, lo=2, hi=256)
    settings = Settings(
        data_dir=data_dir,
        database_url=database_url,
        host=host,
        port=port,
        base_url=base_url,
        base_url_set=env.str("UPTIME_BASE_URL") is not None,
        secret_key=env.secret("UPTIME_SECRET_KEY") or "",
        session_ttl=env.duration("UPTIME_SESSION_TTL", 14 * 86400, lo=60),
        session_max_age=env.duration("UPTIME_SESSION_MAX_AGE", 90 * 86400, lo=60),
        min_check_interval=env.int("UPTIME_MIN_CHECK_INTERVAL", 30, lo=1, hi=86400),
        locations=env.list("UPTIME_LOCATIONS", ("local",)),
        max_monitors_per_team=env.int(
            "UPTIME_MAX_MONITORS_PER_TEAM",
            env.int("UPTIME_MAX_MONITORS_PER_USER", 1000, lo=0),
            lo=0,
        ),
        max_teams_per_user=env.int("UPTIME_MAX_TEAMS_PER_USER", 20, lo=1),
        audit_retention_days=env.int("UPTIME_AUDIT_RETENTION_DAYS", 365, lo=1),
        raw_retention_days=env.int("UPTIME_RAW_RETENTION_DAYS", 30, lo=1),
        max_body_bytes=env.int("UPTIME_MAX_BODY_BYTES", 1024 * 1024, lo=1),
        block_private_targets=env.bool("UPTIME_BLOCK_PRIVATE_TARGETS", False),
        apprise_allow=_apprise_allow(env),
        ca_bundle=env.path("UPTIME_CA_BUNDLE"),
        smtp_host=env.str("UPTIME_SMTP_HOST"),
        smtp_port=env.int("UPTIME_SMTP_PORT", 587, lo=1, hi=65535),
        smtp_username=env.str("UPTIME_SMTP_USERNAME"),
        smtp_password=env.secret("UPTIME_SMTP_PASSWORD"),
        smtp_tls=env.choice("UPTIME_SMTP_TLS", "starttls", ("starttls", "ssl", "none")),
        mail_from=_mail_from(env.str("UPTIME_MAIL_FROM") or "uptime@localhost"),
        rate_limit=env.rate("UPTIME_RATE_LIMIT", "600/minute"),
        login_rate_limit=env.rate("UPTIME_LOGIN_RATE_LIMIT", "30/minute"),
        ping_rate_limit=env.rate("UPTIME_PING_RATE_LIMIT", "60/minute"),
        unknown_ping_rate_limit=env.rate("UPTIME_UNKNOWN_PING_RATE_LIMIT", "60/minute"),
        email_test_rate_limit=env.rate("UPTIME_EMAIL_TEST_RATE_LIMIT", "5/minute"),
        agent_rate_limit=env.rate("UPTIME_AGENT_RATE_LIMIT", "1200/minute"),
        ratelimit_storage_url=env.storage("UPTIME_RATELIMIT_STORAGE_URL") or "memory://",
        metrics_token=env.secret("UPTIME_METRICS_TOKEN"),
        metrics_refresh_interval=env.duration("UPTIME_METRICS_REFRESH_INTERVAL", 15, lo=1),
        allowed_emails=_allowed_emails(env),
        admins=tuple(e.lower() for e in env.list("UPTIME_ADMINS", ())),
        oauth_providers=_oauth_providers(env),
        log_level=env.choice(
            "UPTIME_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"), upper=True
        ),
        http_threads=http_threads,
        # One at a time on SQLite, where a read is all CPU (read_gate.py).
        api_read_concurrency=env.int(
            "UPTIME_API_READ_CONCURRENCY",
            1 if database_url.startswith("sqlite") else 0,
            lo=0,
            hi=http_threads,
        ),
        test_run_timeout=env.duration("UPTIME_TEST_RUN_TIMEOUT", 60, lo=1),
        test_concurrency=_test_concurrency(env, http_threads),
        test_concurrency_per_user=env.int("UPTIME_TEST_CONCURRENCY_PER_USER", 2, lo=1),
        check_concurrency=env.int("UPTIME_CHECK_CONCURRENCY", 200, lo=1, hi=10000),
        lease_seconds=env.int("UPTIME_LEASE_SECONDS", 15, lo=2, hi=3600),
        delivery_lease_seconds=env.int("UPTIME_DELIVERY_LEASE_SECONDS", 120, lo=2, hi=3600),
        shutdown_grace=env.int("UPTIME_SHUTDOWN_GRACE", 30, lo=0, hi=3600),
        event_loop=env.choice("UPTIME_EVENT_LOOP", EVENT_LOOPS[0], EVENT_LOOPS),
        gc_threshold=env.gc_threshold("UPTIME_GC_THRESHOLD"),
        reuse_port=env.bool("UPTIME_REUSE_PORT", False),
    )
    if settings.smtp_password and not settings.smtp_username:
        raise ConfigError("UPTIME_SMTP_PASSWORD: needs UPTIME_SMTP_USERNAME as well")
    return settings


# Binding these listens on every address of the machine: none of them is
# "the" address, and which one people reach is the machine's business.
WILDCARD_HOSTS = frozenset(("", "0.0.0.0", "::", "[::]", "*"))


def listen_url(host: str, port: int) -> str:
    """``UPTIME_BASE_URL``'s default: ``http://host:port`` of where the API listens.

    IPv6 in brackets. A wildcard bind (0.0.0.0, ::) names no address anyone
    can use, so its loopback one (127.0.0.1, [::1]) stands in: right on the
    machine itself, and the daemon warns at start that UPTIME_BASE_URL should
    say the address people reach (docs/configuration.md).
    """
    if host in WILDCARD_HOSTS:
        host = "::1" if ":" in host else "127.0.0.1"
    host = host.removeprefix("[").removesuffix("]")
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def ensure_secret_key(settings: Settings) -> Settings:
    """Return settings with a secret key, creating a persistent one if unset.

    The key signs short-lived cookies (OAuth state binding); keeping it in the
    data dir means a restart does not break a sign-in that is under way.
    """
    if settings.secret_key:
        return settings
    path = settings.data_dir / "secret_key"
    private_dir(settings.data_dir)
    key = secrets.token_urlsafe(48)
    if not create_private_file(path, key):
        # Made by an earlier start, or by another daemon starting beside us.
        tighten(path)
        key = path.read_text().strip()
    return settings.with_overrides(secret_key=key)


class _Env:
    """Typed, strict accessors over an environment mapping."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def str(self, name: str) -> str | None:
        value = self.environ.get(name)
        if value is None or value.strip() == "":
            return None
        return value.strip()

    def secret(self, name: str) -> str | None:
        file_name = self.str(f"{name}_FILE")
        if file_name:
            try:
                return Path(file_name).read_text().strip() or None
            except OSError as exc:
                raise ConfigError(f"{name}_FILE: cannot read {file_name}: {exc.strerror}") from None
        return self.str(name)

    def int(self, name: str, default: int, *, lo: int | None = None, hi: int | None = None) -> int:
        raw = self.str(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name}: expected an integer, got {raw!r}") from None
        _check_range(name, value, lo, hi)
        return value

    def gc_threshold(self, name: str) -> tuple[int, int, int] | None:
        """Three integers ``gen0,gen1,gen2`` (gen0 at least 100), or ``python``."""
        raw = self.str(name)
        if raw is None:
            return DEFAULT_GC_THRESHOLD
        if raw.lower() == "python":
            return None
        parts = [p.strip() for p in raw.split(",")]
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ConfigError(f"{name}: expected three integers like 10000,10,10 or 'python'")
        gen0, gen1, gen2 = (int(p) for p in parts)
        _check_range(name, gen0, 100, 10_000_000)
        _check_range(name, gen1, 1, 1000)
        _check_range(name, gen2, 1, 1000)
        return gen0, gen1, gen2

    def duration(self, name: str, default: int, *, lo: int = 0) -> int:
        raw = self.str(name)
        if raw is None:
            return default
        match = _DURATION.match(raw.lower())
        if not match:
            raise ConfigError(
                f"{name}: expected seconds or a duration like 14d, 12h, 30m; got {raw!r}"
            )
        value = int(match.group(1)) * _UNITS[match.group(2)]
        _check_range(name, value, lo, None)
        return value

    def bool(self, name: str, default: bool) -> bool:
        raw = self.str(name)
        if raw is None:
            return default
        lowered = raw.lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(f"{name}: expected true or false, got {raw!r}")

    def choice(self, name: str, default: str, allowed: tuple[str, ...], upper: bool = False) -> str:
        raw = self.str(name)
        if raw is None:
            return default
        value = raw.upper() if upper else raw.lower()
        if value not in allowed:
            raise ConfigError(f"{name}: expected one of {', '.join(allowed)}; got {raw!r}")
        return value

    def list(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        raw = self.str(name)
        if raw is None:
            return default
        items = tuple(dict.fromkeys(p.strip() for p in raw.split(",") if p.strip()))
        if not items:
            raise ConfigError(f"{name}: expected a comma-separated list, got {raw!r}")
        return items

    def path(self, name: str) -> str | None:
        raw = self.str(name)
        if raw is not None and not Path(raw).is_file():
            raise ConfigError(f"{name}: no such file: {raw}")
        return raw

    def storage(self, name: str) -> str | None:
        from limits.errors import ConfigurationError
        from limits.storage import storage_from_string

        raw = self.str(name)
        if raw is None:
            return None
        try:
            storage_from_string(raw)  # parses and checks the client library; no I/O
        except ConfigurationError as exc:
            raise ConfigError(f"{name}: {exc}".splitlines()[0]) from None
        return raw

    def rate(self, name: str, default: str) -> str | None:
        from limits import parse_many

        raw = self.str(name) or default
        if raw.lower() == "off":
            return None
        try:
            parse_many(raw)
        except ValueError:
            raise ConfigError(
                f"{name}: expected a rate like 600/minute or off, got {raw!r}"
            ) from None
        return raw


def _check_range(name: str, value: int, lo: int | None, hi: int | None) -> None:
    if lo is not None and value < lo:
        raise ConfigError(f"{name}: must be at least {lo}, got {value}")
    if hi is not None and value > hi:
        raise ConfigError(f"{name}: must be at most {hi}, got {value}")


def _test_concurrency(env: _Env, http_threads: int) -> int:
    """How many "test now" runs may hold a waitress thread at once.

    Each run holds its thread for up to UPTIME_TEST_RUN_TIMEOUT; at least one
    thread must stay free for /healthz, /metrics and the rest of the API.
    """
    default = max(1, min(4, http_threads // 2))
    value = env.int("UPTIME_TEST_CONCURRENCY", default, lo=1)
    if value >= http_threads:
        raise ConfigError(
            f"UPTIME_TEST_CONCURRENCY: must be below UPTIME_HTTP_THREADS ({http_threads}), "
            f"got {value}"
        )
    return value


def _mail_from(value: str) -> str:
    """One address, optionally with a display name: it becomes the From header."""
    from email.utils import getaddresses

    parsed = getaddresses([value])
    ok = len(parsed) == 1 and "@" in parsed[0][1] and not any(ch in value for ch in "\r\n\0,;")
    if not ok:
        raise ConfigError(
            f"UPTIME_MAIL_FROM: expected one address like uptime@example.com "
            f"or 'Uptime <uptime@example.com>', got {value!r}"
        )
    return value


def _check_database_url(url: str) -> None:
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        if not url.startswith("sqlite:///") or len(url) <= len("sqlite:///"):
            raise ConfigError(f"UPTIME_DATABASE_URL: expected sqlite:///path, got {url!r}")
        return
    if scheme not in {"postgresql", "postgres"}:
        raise ConfigError("UPTIME_DATABASE_URL: expected sqlite:///path or postgresql://…")
    # The driver is an extra, so that SQLite installs need no compiled PostgreSQL
    # client; say so at start-up rather than at the first connection.
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError(
            "UPTIME_DATABASE_URL: PostgreSQL needs its driver: pip install 'uptime[postgres]'"
        )


def _check_http_url(name: str, url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ConfigError(f"{name}: expected an http(s) URL, got {url!r}")


def _apprise_allow(env: _Env) -> tuple[str, ...]:
    schemes = tuple(s.lower() for s in env.list("UPTIME_APPRISE_ALLOW", ()))
    for scheme in schemes:
        if not re.fullmatch(r"[a-z0-9]{1,32}", scheme):
            raise ConfigError(
                f"UPTIME_APPRISE_ALLOW: expected Apprise schemes like mailto,irc; got {scheme!r}"
            )
    return schemes


def _allowed_emails(env: _Env) -> tuple[str, ...]:
    entries = tuple(e.lower() for e in env.list("UPTIME_ALLOWED_EMAILS", ()))
    for entry in entries:
        local, at, domain = entry.rpartition("@")
        if entry != "*" and (not at or not domain or "@" in local or " " in entry):
            raise ConfigError(
                f"UPTIME_ALLOWED_EMAILS: expected addresses, @domain entries or *; got {entry!r}"
            )
    return entries


# Providers with built-in endpoints; any other name needs its URLs configured.
BUILTIN_PROVIDERS = ("github", "google")
_OAUTH_KEY = re.compile(r"^UPTIME_OAUTH_([A-Z0-9]+)_CLIENT_ID$")


def _oauth_providers(env: _Env) -> dict[str, OAuthProvider]:
    providers: dict[str, OAuthProvider] = {}
    for key in sorted(env.environ):
        match = _OAUTH_KEY.match(key)
        if not match or not env.str(key):
            continue
        upper = match.group(1)
        prefix = f"UPTIME_OAUTH_{upper}_"
        urls = {}
        for part in ("AUTHORIZE_URL", "TOKEN_URL", "USERINFO_URL", "METADATA_URL", "EMAILS_URL"):
            value = env.str(prefix + part)
            if value:
                _check_http_url(prefix + part, value)
            urls[part.lower()] = value
        name = upper.lower()
        if name not in BUILTIN_PROVIDERS and not (
            urls["metadata_url"]
            or (urls["authorize_url"] and urls["token_url"] and urls["userinfo_url"])
        ):
            raise ConfigError(
                f"{prefix}METADATA_URL: provider {name!r} needs an OIDC metadata URL, or "
                f"{prefix}AUTHORIZE_URL, {prefix}TOKEN_URL and {prefix}USERINFO_URL"
            )
        providers[name] = OAuthProvider(
            name=name,
            client_id=env.str(key) or "",
            client_secret=env.secret(prefix + "CLIENT_SECRET"),
            scopes=env.str(prefix + "SCOPES"),
            **urls,
        )
    return providers


# -- the probe agent (uptime agent run): no database, no server settings ----------


@dataclass(frozen=True)
class AgentSettings:
    """What a probe agent reads from its environment (docs/agents.md)."""

    # host:port (a TCP connect) or http(s) URLs (a GET getting any answer); the
    # uplink works while any of them answers. Empty: no canary.
    canary: tuple[str, ...] = ()
    canary_interval: int = 10
    buffer_dir: Path = Path(platformdirs.user_data_dir("uptime")) / "agent-buffer"
    buffer_max_results: int = 10_000
    check_concurrency: int = 200
    block_private_targets: bool = False
    max_body_bytes: int = 1024 * 1024
    ca_bundle: str | None = None
    event_loop: str = "uvloop"  # the probes' event loop, as the daemon's UPTIME_EVENT_LOOP
    gc_threshold: tuple[int, int, int] | None = DEFAULT_GC_THRESHOLD  # as the daemon's


def load_agent_settings(environ: Mapping[str, str] | None = None) -> AgentSettings:
    env = _Env(os.environ if environ is None else environ)
    canary = env.list("UPTIME_AGENT_CANARY", ())
    for entry in canary:
        if "://" in entry:
            _check_http_url("UPTIME_AGENT_CANARY", entry)
        elif not re.fullmatch(r"\[?[^\s/]+?\]?:\d{1,5}", entry):
            raise ConfigError(f"UPTIME_AGENT_CANARY: expected host:port or a URL, got {entry!r}")
    buffer_dir = env.str("UPTIME_AGENT_BUFFER_DIR")
    return AgentSettings(
        canary=canary,
        canary_interval=env.duration("UPTIME_AGENT_CANARY_INTERVAL", 10, lo=1),
        buffer_dir=Path(buffer_dir) if buffer_dir else AgentSettings.buffer_dir,
        buffer_max_results=env.int("UPTIME_AGENT_BUFFER_MAX", 10_000, lo=1, hi=10_000_000),
        check_concurrency=env.int("UPTIME_CHECK_CONCURRENCY", 200, lo=1, hi=10000),
        block_private_targets=env.bool("UPTIME_BLOCK_PRIVATE_TARGETS", False),
        max_body_bytes=env.int("UPTIME_MAX_BODY_BYTES", 1024 * 1024, lo=1),
        ca_bundle=env.path("UPTIME_CA_BUNDLE"),
        event_loop=env.choice("UPTIME_EVENT_LOOP", EVENT_LOOPS[0], EVENT_LOOPS),
        gc_threshold=env.gc_threshold("UPTIME_GC_THRESHOLD"),
    )
