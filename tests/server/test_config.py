"""Settings from UPTIME_* variables: defaults, parsing, one-line errors naming the variable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from uptime_server.config import ConfigError, load_agent_settings, load_settings

BASE = {"UPTIME_DATA_DIR": "/srv/uptime"}

# Every variable with a value it refuses.
BAD_VALUES = [
    ("UPTIME_PORT", "http"),
    ("UPTIME_PORT", "70000"),
    ("UPTIME_PORT", "-1"),
    ("UPTIME_DATABASE_URL", "mysql://db/uptime"),
    ("UPTIME_DATABASE_URL", "sqlite://relative.db"),
    ("UPTIME_DATABASE_URL", "sqlite:///"),
    ("UPTIME_BASE_URL", "ftp://uptime.example.com"),
    ("UPTIME_BASE_URL", "uptime.example.com"),
    ("UPTIME_SESSION_TTL", "forever"),
    ("UPTIME_SESSION_TTL", "30"),
    ("UPTIME_MIN_CHECK_INTERVAL", "0"),
    ("UPTIME_MIN_CHECK_INTERVAL", "1.5"),
    ("UPTIME_LOCATIONS", " , "),
    ("UPTIME_MAX_MONITORS_PER_USER", "-1"),
    ("UPTIME_RAW_RETENTION_DAYS", "0"),
    ("UPTIME_MAX_BODY_BYTES", "1MB"),
    ("UPTIME_BLOCK_PRIVATE_TARGETS", "maybe"),
    ("UPTIME_APPRISE_ALLOW", "mailto://"),
    ("UPTIME_APPRISE_ALLOW", "irc, smtp relay"),
    ("UPTIME_CA_BUNDLE", "/nonexistent/ca.pem"),
    ("UPTIME_SMTP_PORT", "0"),
    ("UPTIME_SMTP_TLS", "tls"),
    ("UPTIME_MAIL_FROM", "nobody"),
    ("UPTIME_MAIL_FROM", "a@example.com, b@example.com"),
    ("UPTIME_RATE_LIMIT", "lots"),
    ("UPTIME_LOGIN_RATE_LIMIT", "30 per fortnight"),
    ("UPTIME_RATELIMIT_STORAGE_URL", "carrier-pigeon://coop"),
    ("UPTIME_ALLOWED_EMAILS", "alice@example.com,bob"),
    ("UPTIME_LOG_LEVEL", "LOUD"),
    ("UPTIME_HTTP_THREADS", "0"),
    ("UPTIME_HTTP_THREADS", "1"),  # one thread must stay free of test runs
    ("UPTIME_API_READ_CONCURRENCY", "-1"),
    ("UPTIME_API_READ_CONCURRENCY", "33"),  # more than the 32 HTTP threads
    ("UPTIME_EVENT_LOOP", "trio"),
    ("UPTIME_REUSE_PORT", "maybe"),
    ("UPTIME_GC_THRESHOLD", "10000"),
    ("UPTIME_GC_THRESHOLD", "50,10,10"),  # generation 0 below 100
    ("UPTIME_GC_THRESHOLD", "10000,0,10"),
    ("UPTIME_GC_THRESHOLD", "a,b,c"),
    ("UPTIME_SESSION_MAX_AGE", "forever"),
    ("UPTIME_SESSION_MAX_AGE", "30"),
    ("UPTIME_METRICS_REFRESH_INTERVAL", "soon"),
    ("UPTIME_METRICS_REFRESH_INTERVAL", "0"),
    ("UPTIME_TEST_RUN_TIMEOUT", "0"),
    ("UPTIME_TEST_RUN_TIMEOUT", "a minute"),
    ("UPTIME_TEST_CONCURRENCY", "0"),
    ("UPTIME_TEST_CONCURRENCY", "32"),  # not below the 32 HTTP threads
    ("UPTIME_TEST_CONCURRENCY_PER_USER", "0"),
    ("UPTIME_CHECK_CONCURRENCY", "many"),
    ("UPTIME_LEASE_SECONDS", "1"),
    ("UPTIME_DELIVERY_LEASE_SECONDS", "1"),
    ("UPTIME_SHUTDOWN_GRACE", "-5"),
    ("UPTIME_SECRET_KEY_FILE", "/nonexistent/secret"),
    ("UPTIME_SMTP_PASSWORD_FILE", "/nonexistent/password"),
    ("UPTIME_METRICS_TOKEN_FILE", "/nonexistent/token"),
]


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_it_names_the_variable_in_one_line(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({**BASE, name: value})
    message = str(raised.value)
    assert message.startswith(f"{name}: ")
    assert "\n" not in message


def test_it_names_a_bad_provider_url() -> None:
    env = {**BASE, "UPTIME_OAUTH_GITHUB_CLIENT_ID": "id", "UPTIME_OAUTH_GITHUB_TOKEN_URL": "nope"}
    with pytest.raises(ConfigError, match="^UPTIME_OAUTH_GITHUB_TOKEN_URL: "):
        load_settings(env)


def test_it_has_the_documented_defaults() -> None:
    settings = load_settings(BASE)
    assert settings.database_url == "sqlite:////srv/uptime/uptime.db"
    assert (settings.host, settings.port) == ("127.0.0.1", 8080)
    assert settings.base_url == "http://127.0.0.1:8080"
    assert settings.session_ttl == 14 * 86400
    assert settings.min_check_interval == 30
    assert settings.locations == ("local",)
    assert settings.max_monitors_per_team == 1000
    assert settings.raw_retention_days == 30
    assert settings.max_body_bytes == 1024 * 1024
    assert settings.block_private_targets is False
    assert (settings.smtp_host, settings.smtp_port, settings.smtp_tls) == (None, 587, "starttls")
    assert settings.rate_limit == "600/minute"
    assert settings.login_rate_limit == "30/minute"
    assert settings.ratelimit_storage_url == "memory://"
    assert settings.allowed_emails == ()
    assert settings.oauth_providers == {}
    assert settings.session_max_age == 90 * 86400
    assert settings.metrics_refresh_interval == 15
    assert (settings.http_threads, settings.test_run_timeout) == (32, 60)
    assert (settings.test_concurrency, settings.test_concurrency_per_user) == (4, 2)
    # Checks' leases are short and renewed; an outbox row's is long enough
    # for a slow SMTP relay (30 s per socket operation).
    assert (settings.lease_seconds, settings.delivery_lease_seconds) == (15, 120)


@pytest.mark.parametrize(("threads", "tests"), [("2", 1), ("4", 2), ("8", 4), ("32", 4)])
def test_test_runs_leave_http_threads_free_by_default(threads: str, tests: int) -> None:
    settings = load_settings({**BASE, "UPTIME_HTTP_THREADS": threads})
    assert settings.test_concurrency == tests


def test_api_reads_pass_one_at_a_time_on_sqlite_only_by_default() -> None:
    assert load_settings(BASE).api_read_concurrency == 1
    postgres = {**BASE, "UPTIME_DATABASE_URL": "postgresql://db.example/uptime"}
    assert load_settings(postgres).api_read_concurrency == 0
    assert load_settings({**postgres, "UPTIME_API_READ_CONCURRENCY": "2"}).api_read_concurrency == 2
    assert load_settings({**BASE, "UPTIME_API_READ_CONCURRENCY": "0"}).api_read_concurrency == 0


def test_the_probes_run_on_uvloop_unless_told_otherwise() -> None:
    assert load_settings(BASE).event_loop == "uvloop"
    assert load_settings({**BASE, "UPTIME_EVENT_LOOP": "asyncio"}).event_loop == "asyncio"
    assert load_settings({**BASE, "UPTIME_EVENT_LOOP": " UVLOOP "}).event_loop == "uvloop"


def test_the_port_is_the_daemon_s_own_unless_shared() -> None:
    assert load_settings(BASE).reuse_port is False
    assert load_settings({**BASE, "UPTIME_REUSE_PORT": "true"}).reuse_port is True


def test_the_collector_runs_less_often_unless_told_otherwise() -> None:
    assert load_settings(BASE).gc_threshold == (10_000, 10, 10)
    assert load_settings({**BASE, "UPTIME_GC_THRESHOLD": " 5000, 5 ,20"}).gc_threshold == (
        5000,
        5,
        20,
    )
    assert load_settings({**BASE, "UPTIME_GC_THRESHOLD": "Python"}).gc_threshold is None
    assert load_agent_settings({}).gc_threshold == (10_000, 10, 10)
    assert load_agent_settings({"UPTIME_GC_THRESHOLD": "python"}).gc_threshold is None
    with pytest.raises(ConfigError, match="UPTIME_GC_THRESHOLD"):
        load_agent_settings({"UPTIME_GC_THRESHOLD": "1,2"})


def test_test_runs_must_stay_below_the_http_threads() -> None:
    env = {**BASE, "UPTIME_HTTP_THREADS": "16", "UPTIME_TEST_CONCURRENCY": "15"}
    assert load_settings(env).test_concurrency == 15
    with pytest.raises(ConfigError, match=r"below UPTIME_HTTP_THREADS \(16\), got 16$"):
        load_settings({**env, "UPTIME_TEST_CONCURRENCY": "16"})


def test_it_parses_values(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    settings = load_settings(
        {
            **BASE,
            "UPTIME_SESSION_TTL": "12h",
            "UPTIME_SESSION_MAX_AGE": "30d",
            "UPTIME_TEST_RUN_TIMEOUT": "2m",
            "UPTIME_METRICS_REFRESH_INTERVAL": "1m",
            "UPTIME_LOCATIONS": "eu, us ,eu",
            "UPTIME_BLOCK_PRIVATE_TARGETS": "yes",
            "UPTIME_RATE_LIMIT": "off",
            "UPTIME_SMTP_TLS": "SSL",
            "UPTIME_LOG_LEVEL": "debug",
            "UPTIME_BASE_URL": "https://uptime.example.com/",
            "UPTIME_SECRET_KEY_FILE": str(secret),
            "UPTIME_ALLOWED_EMAILS": "Alice@Example.com,@corp.example",
            "UPTIME_DATABASE_URL": "postgresql://u:p@db:5433/uptime",
        }
    )
    assert settings.session_ttl == 12 * 3600
    assert settings.session_max_age == 30 * 86400
    assert (settings.test_run_timeout, settings.metrics_refresh_interval) == (120, 60)
    assert settings.locations == ("eu", "us")
    assert settings.block_private_targets is True
    assert settings.rate_limit is None
    assert (settings.smtp_tls, settings.log_level) == ("ssl", "DEBUG")
    assert settings.base_url == "https://uptime.example.com"
    assert settings.secret_key == "s3cret"
    assert settings.allowed_emails == ("alice@example.com", "@corp.example")
    assert settings.database_url == "postgresql://u:p@db:5433/uptime"


def test_it_never_shows_secrets_when_redacted() -> None:
    env = {"UPTIME_SECRET_KEY": "k", "UPTIME_SMTP_USERNAME": "u", "UPTIME_SMTP_PASSWORD": "pw"}
    settings = load_settings({**BASE, **env})
    redacted: dict[str, Any] = settings.redacted()
    assert redacted["secret_key"] == "<set>"
    assert redacted["smtp_password"] == "<set>"
    assert "pw" not in repr(redacted.values())


def test_it_hides_passwords_in_urls_when_redacted() -> None:
    env = {"UPTIME_DATABASE_URL": "postgresql://uptime:db-pw@[::1]:5433/uptime"}
    settings = load_settings({**BASE, **env})
    assert settings.redacted()["database_url"] == "postgresql://uptime:***@[::1]:5433/uptime"
    assert settings.redacted()["ratelimit_storage_url"] == "memory://"
    redis = settings.with_overrides(ratelimit_storage_url="redis://:rl-pw@127.0.0.1:6379/0")
    assert redis.redacted()["ratelimit_storage_url"] == "redis://:***@127.0.0.1:6379/0"


@pytest.mark.parametrize(
    ("listen", "base_url"),
    [
        ({"UPTIME_PORT": "8931"}, "http://127.0.0.1:8931"),
        ({"UPTIME_HOST": "192.0.2.7", "UPTIME_PORT": "8931"}, "http://192.0.2.7:8931"),
        ({"UPTIME_HOST": "uptime.lan"}, "http://uptime.lan:8080"),
        ({"UPTIME_HOST": "::1", "UPTIME_PORT": "8931"}, "http://[::1]:8931"),
        # A wildcard bind names no address: its family's loopback stands in.
        ({"UPTIME_HOST": "0.0.0.0", "UPTIME_PORT": "8931"}, "http://127.0.0.1:8931"),
        ({"UPTIME_HOST": "::", "UPTIME_PORT": "8931"}, "http://[::1]:8931"),
        ({}, "http://127.0.0.1:8080"),
    ],
)
def test_the_base_url_defaults_to_where_the_api_listens(
    listen: dict[str, str], base_url: str
) -> None:
    settings = load_settings({**BASE, **listen})
    assert (settings.base_url, settings.base_url_set) == (base_url, False)


def test_a_set_base_url_wins_over_the_listen_address() -> None:
    env = {**BASE, "UPTIME_PORT": "8931", "UPTIME_BASE_URL": "https://uptime.example.com/"}
    settings = load_settings(env)
    assert (settings.base_url, settings.base_url_set) == ("https://uptime.example.com", True)


def test_unknown_ping_tokens_are_limited_per_address_by_default() -> None:
    assert load_settings(BASE).unknown_ping_rate_limit == "60/minute"
    env = {**BASE, "UPTIME_UNKNOWN_PING_RATE_LIMIT": "off"}
    assert load_settings(env).unknown_ping_rate_limit is None
    with pytest.raises(ConfigError, match="^UPTIME_UNKNOWN_PING_RATE_LIMIT: "):
        load_settings({**BASE, "UPTIME_UNKNOWN_PING_RATE_LIMIT": "lots"})


def test_apprise_schemes_are_allowed_by_name() -> None:
    assert load_settings(BASE).apprise_allow == ()
    allowed = load_settings({**BASE, "UPTIME_APPRISE_ALLOW": " mailto, MAILTOS,irc,mailto "})
    assert allowed.apprise_allow == ("mailto", "mailtos", "irc")
