"""The data model.

Tables and what owns them:
- users, identities (OAuth accounts), sessions (SHA-256 of the cookie token),
  api_tokens (SHA-256 of bearer tokens for scripts and CI), oauth_states and
  cli_tickets (sign-in in flight);
- monitors (configuration plus current state), monitor_locations (one row per
  monitor and location: due time and claim lease for the scheduler),
  monitor_tags (a monitor's labels), monitor_dependencies (which monitors
  a monitor depends on), alert_settings, channels (named
  notification channels of a user);
- check_runs (raw history), rollups (5m/1h/1d aggregates with histograms);
- notifications (incidents and recoveries), outbox (emails and Slack posts
  waiting for delivery, written in the same transaction as the state change).

Times are stored as naive UTC and come back as aware UTC datetimes.

Speed tricks: hot reads select only the columns they use, as tuples, or go
through ``db.Prepared``; the models are for everything else.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import peewee as pw

from uptime_server.db import database

# A monitor that names no expected status passes on any 2xx status registered with IANA.
DEFAULT_EXPECTED_STATUS = [200, 201, 202, 203, 204, 205, 206, 207, 208, 226]
MONITOR_TYPES = ("http", "https", "tcp", "udp", "ping", "dns", "heartbeat")
# The types that have a probe (engine/probes/registry.py ATTEMPTS; a test keeps
# them equal): only these are claimed by the scheduler and recorded.
CHECKED_TYPES = ("http", "https", "tcp", "udp", "dns", "ping", "heartbeat")
# Types that are pinged rather than checked: their "probe" judges, when the
# deadline falls due, that no ping came (heartbeats/verdict.py). A
# "test now" has nothing to run for them.
PASSIVE_TYPES = ("heartbeat",)
_HTTP_FIELDS = (
    "method",
    "expected_status",
    "headers",
    "body",
    "follow_redirects",
    "verify_ssl",
    "expected_content",
    "excluded_content",
    "json_path",
    "expected_json_value",
)
# The configuration fields that belong to one type only (a monitor of another
# type refuses them; docs/api.md#monitor-fields). The rest apply to every type.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "http": _HTTP_FIELDS,
    "https": _HTTP_FIELDS,
    "tcp": ("tls", "send", "expect", "verify_ssl"),
    "udp": ("send", "expect"),
    "dns": ("query_name", "record_type", "resolver", "expected_rcode", "expected_values"),
    "ping": ("count", "max_packet_loss"),
    "heartbeat": ("period", "grace", "cron", "timezone"),
}
STATUSES = ("pending", "online", "warning", "offline", "maintenance")
# Incidents (downtime), their ends (recovery), certificate-expiry alerts, and
# noise control's messages (notify/noise.py, docs/alerts.md).
NOTIFICATION_TYPES = (
    "downtime",
    "recovery",
    "cert_expiry",
    "reminder",
    "flapping",
    "flapping_settled",
)
DEFAULT_CERT_EXPIRY_DAYS = (14, 7, 3, 1)


class UTCDateTimeField(pw.DateTimeField):
    """Aware UTC in Python, naive UTC in the database (same on SQLite and PG)."""

    def db_value(self, value: Any) -> Any:
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return super().db_value(value)

    def python_value(self, value: Any) -> Any:
        if isinstance(value, str):
            # SQLite's text: ISO 8601, parsed in C (peewee tries strptime
            # formats). Stored times are naive UTC: read with the offset
            # appended they come out aware UTC at once (``replace(tzinfo=)``
            # costs more than the parse); text with an offset of its own
            # takes the long way, and so does a bare date (Python 3.11 reads
            # "2026-01-02+00:00" as naive midnight).
            try:
                parsed = datetime.fromisoformat(value + "+00:00")
            except ValueError:
                parsed = None
            if parsed is not None and parsed.tzinfo is UTC:
                return parsed
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                value = super().python_value(value)
        else:
            value = super().python_value(value)
        if isinstance(value, datetime):
            if value.tzinfo is None:
                return value.replace(tzinfo=UTC)
            if value.tzinfo is not UTC:
                return value.astimezone(UTC)
        return value


class JSONField(pw.TextField):
    """JSON stored as text: portable across SQLite and PostgreSQL."""

    def db_value(self, value: Any) -> Any:
        return None if value is None else json.dumps(value, separators=(",", ":"))

    def python_value(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


class NeverReusedIdField(pw.AutoField):
    """An id never handed out twice, even after the row with the highest id is deleted.

    For tables whose ids outlive a transaction (a check in flight holds its
    monitor's id, the delivery loop a notification's, a request its user's):
    a reused id would send that work to someone else's new row. SQLite reuses
    the highest rowid after a delete unless the key is AUTOINCREMENT;
    PostgreSQL sequences never go back, so SERIAL stays as it is.
    """

    def ddl(self, ctx: Any) -> Any:
        node = super().ddl(ctx)
        database = self.model._meta.database
        if isinstance(getattr(database, "obj", database), pw.SqliteDatabase):
            return pw.NodeList((node, pw.SQL("AUTOINCREMENT")))
        return node


class BaseModel(pw.Model):
    class Meta:
        database = database
        legacy_table_names = False


ROLES = ("viewer", "member", "admin", "owner")  # lowest first (auth/teams.py)


class Team(BaseModel):
    """Who owns monitors, channels, status pages, windows and tokens (migration 0018).

    Every user gets a personal team at sign-up (``User.personal_team``); it is
    an ordinary team, open to invitations. Ids are never reused: an audit
    event or an old CLI default must never name somebody else's new team.
    """

    id = NeverReusedIdField()
    name = pw.CharField(max_length=200)
    slug = pw.CharField(max_length=64, unique=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "teams"


class User(BaseModel):
    id = NeverReusedIdField()
    email = pw.CharField(max_length=320, index=True)
    name = pw.CharField(max_length=200, default="")
    avatar_url = pw.CharField(max_length=2048, null=True)
    created_at = UTCDateTimeField()
    last_login = UTCDateTimeField(null=True)
    # May manage probe agents (auth/admins.py): set at sign-in from
    # UPTIME_ADMINS, or by `uptime server admin grant`.
    is_admin = pw.BooleanField(default=False)
    # The team made at sign-up: a session's team when it names none (null
    # once that team is deleted; auth/teams.py then takes the oldest membership).
    personal_team = pw.ForeignKeyField(Team, null=True, on_delete="SET NULL", index=False)

    # flask-login protocol
    is_authenticated = True
    is_active = True
    is_anonymous = False

    def get_id(self) -> str:
        return str(self.id)

    class Meta:
        table_name = "users"


class Identity(BaseModel):
    """A provider account linked to a user, matched by (provider, subject)."""

    user = pw.ForeignKeyField(User, backref="identities", on_delete="CASCADE")
    provider = pw.CharField(max_length=64)
    subject = pw.CharField(max_length=255)
    email = pw.CharField(max_length=320, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "identities"
        indexes = ((("provider", "subject"), True),)


class Session(BaseModel):
    """A signed-in session; only the SHA-256 of the cookie token is stored."""

    user = pw.ForeignKeyField(User, backref="sessions", on_delete="CASCADE")
    token_hash = pw.CharField(max_length=64, unique=True)
    provider = pw.CharField(max_length=64)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "sessions"


class Membership(BaseModel):
    """A user's role in a team (``ROLES``); a team always keeps an owner."""

    id = pw.AutoField()
    team = pw.ForeignKeyField(Team, backref="memberships", on_delete="CASCADE", index=False)
    user = pw.ForeignKeyField(User, backref="memberships", on_delete="CASCADE")
    role = pw.CharField(max_length=16)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "memberships"
        indexes = ((("team", "user"), True),)


class Invitation(BaseModel):
    """An invitation to a team, sent by email; only the SHA-256 of its token is kept.

    Single use: accepting sets ``accepted_at``/``accepted_by`` in a conditional
    update. ``email`` is only where the link went: whoever opens it joins.
    """

    id = NeverReusedIdField()
    team = pw.ForeignKeyField(Team, backref="invitations", on_delete="CASCADE")
    email = pw.CharField(max_length=320)
    role = pw.CharField(max_length=16)
    token_hash = pw.CharField(max_length=64, unique=True)
    invited_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL", index=False)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()
    accepted_at = UTCDateTimeField(null=True)
    accepted_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL", index=False)

    class Meta:
        table_name = "invitations"


class AuditEvent(BaseModel):
    """Who did what to a team's things, when, and with which session or token.

    ``actor_name`` is copied so the line still reads after the account is
    gone; ``details`` never holds a secret value (services/audit.py).
    """

    id = NeverReusedIdField()
    team = pw.ForeignKeyField(Team, on_delete="CASCADE", index=False)
    at = UTCDateTimeField()
    actor = pw.ForeignKeyField(User, null=True, on_delete="SET NULL", index=False)
    actor_name = pw.CharField(max_length=200, default="")
    via_type = pw.CharField(max_length=16)  # session | token | system
    via_id = pw.BigIntegerField(null=True)
    action = pw.CharField(max_length=64)
    target_type = pw.CharField(max_length=32, null=True)
    target_id = pw.BigIntegerField(null=True)
    details = JSONField(default=dict)

    class Meta:
        table_name = "audit_events"
        indexes = ((("team", "at"), False),)


TOKEN_SCOPES = ("read", "write", "admin", "ping")


class ApiToken(BaseModel):
    """A bearer token for scripts and CI (auth/api_tokens.py); only its SHA-256 is stored.

    Revoking deletes the row. ``prefix`` is the token's first characters, shown
    in listings so a person can tell tokens apart; it is not enough to use one.
    """

    id = NeverReusedIdField()
    user = pw.ForeignKeyField(User, backref="api_tokens", on_delete="CASCADE")
    # The team the token acts in; its scope's role, capped by its user's
    # current role there (auth/teams.py).
    team = pw.ForeignKeyField(Team, on_delete="CASCADE")
    name = pw.CharField(max_length=100)
    scope = pw.CharField(max_length=8)
    token_hash = pw.CharField(max_length=64, unique=True)
    prefix = pw.CharField(max_length=16)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField(null=True)
    last_used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "api_tokens"


class AgentToken(BaseModel):
    """A probe agent's credential, bound to one location (auth/agent_tokens.py).

    Only the SHA-256 of the secret is stored; revoking deletes the row. The
    row is also the agent as the server knows it: what it last reported with
    a claim, renewal or results post (docs/agents.md).
    """

    id = NeverReusedIdField()
    location = pw.CharField(max_length=64)
    name = pw.CharField(max_length=100)
    token_hash = pw.CharField(max_length=64, unique=True)
    prefix = pw.CharField(max_length=16)
    version = pw.CharField(max_length=64, null=True)
    degraded = pw.BooleanField(default=False)
    checks_per_second = pw.FloatField(null=True)
    lag_seconds = pw.FloatField(null=True)
    dropped_results = pw.IntegerField(default=0)
    created_at = UTCDateTimeField()
    last_seen_at = UTCDateTimeField(null=True)
    expires_at = UTCDateTimeField(null=True)  # null: never

    class Meta:
        table_name = "agent_tokens"


class AgentBatch(BaseModel):
    """A result batch an agent posted, by its own id, with the answer it got."""

    agent = pw.ForeignKeyField(AgentToken, on_delete="CASCADE", index=False)
    batch_id = pw.CharField(max_length=64)
    response = pw.TextField()
    created_at = UTCDateTimeField(index=True)

    class Meta:
        table_name = "agent_batches"
        indexes = ((("agent", "batch_id"), True),)


class OAuthState(BaseModel):
    """One sign-in under way: single-use state, OIDC nonce, where to go next.

    The PKCE verifier is not stored: it is derived from the state with the
    secret key (auth/login_state.py), so it is never at rest nor in SQL logs.
    """

    state_hash = pw.CharField(max_length=64, unique=True)
    provider = pw.CharField(max_length=64)
    browser_hash = pw.CharField(max_length=64)
    nonce = pw.CharField(max_length=128, null=True)
    next_url = pw.CharField(max_length=2048, null=True)
    cli_redirect = pw.CharField(max_length=2048, null=True)
    cli_challenge = pw.CharField(max_length=128, null=True)
    link_user = pw.ForeignKeyField(User, null=True, on_delete="CASCADE")
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField(index=True)
    used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "oauth_states"


class CliTicket(BaseModel):
    """A one-time ticket handed to the CLI's loopback redirect (RFC 8252)."""

    ticket_hash = pw.CharField(max_length=64, unique=True)
    user = pw.ForeignKeyField(User, on_delete="CASCADE")
    provider = pw.CharField(max_length=64)
    challenge = pw.CharField(max_length=128)
    expires_at = UTCDateTimeField(index=True)
    used_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "cli_tickets"


class Monitor(BaseModel):
    id = NeverReusedIdField()
    # Who created it; the team owns it (migration 0018).
    user = pw.ForeignKeyField(User, backref="monitors", on_delete="CASCADE")
    team = pw.ForeignKeyField(Team, on_delete="CASCADE", index=False)
    name = pw.CharField(max_length=200)
    url = pw.CharField(max_length=2048, null=True)
    type = pw.CharField(max_length=16)
    method = pw.CharField(max_length=16, default="GET")
    expected_status = JSONField(default=lambda: list(DEFAULT_EXPECTED_STATUS))
    timeout = pw.IntegerField(default=30)
    check_interval = pw.IntegerField(default=60)
    retry_count = pw.IntegerField(default=0)
    locations = JSONField(default=lambda: ["local"])
    follow_redirects = pw.BooleanField(default=True)
    verify_ssl = pw.BooleanField(default=True)
    headers = JSONField(default=dict)
    body = pw.TextField(null=True)
    expected_content = pw.TextField(null=True)
    excluded_content = pw.TextField(null=True)
    json_path = pw.TextField(null=True)
    expected_json_value = pw.TextField(null=True)
    degraded_response_time = pw.IntegerField(null=True)
    # Fields of the other types (TYPE_FIELDS; migration 0003).
    tls = pw.BooleanField(default=False)
    send = pw.TextField(null=True)
    expect = pw.TextField(null=True)
    query_name = pw.TextField(null=True)
    record_type = pw.CharField(max_length=8, null=True)
    resolver = pw.CharField(max_length=300, null=True)
    expected_rcode = pw.CharField(max_length=16, null=True)
    expected_values = JSONField(null=True)
    count = pw.IntegerField(null=True)
    max_packet_loss = pw.FloatField(null=True)
    # The stable name ``uptime apply`` matches by (migration 0007); unique per team.
    key = pw.CharField(max_length=100, null=True)
    # Heartbeat monitors (migration 0005): a schedule of period or cron (in
    # timezone) plus grace, and the ping token: its SHA-256 is the lookup
    # key, the token itself is kept sealed under the secret key only so its
    # owner can be shown the URL again (engine/ping_tokens.py).
    period = pw.IntegerField(null=True)
    grace = pw.IntegerField(null=True)
    cron = pw.CharField(max_length=200, null=True)
    timezone = pw.CharField(max_length=64, null=True)
    ping_token_hash = pw.CharField(max_length=64, null=True, unique=True)
    ping_token_sealed = pw.TextField(null=True)
    # A start ping not yet followed by a finishing one.
    ping_started_at = UTCDateTimeField(null=True)

    # Current state, maintained by the engine.
    status = pw.CharField(max_length=16, default="pending")
    paused = pw.BooleanField(default=False)
    paused_at = UTCDateTimeField(null=True)
    pause_reason = pw.TextField(null=True)
    response_time = pw.IntegerField(null=True)
    status_code = pw.IntegerField(null=True)
    last_error = pw.TextField(null=True)
    last_check = UTCDateTimeField(null=True)
    last_success = UTCDateTimeField(null=True)
    last_failure = UTCDateTimeField(null=True)
    cert_expires_at = UTCDateTimeField(null=True)
    # The certificate last seen (with cert_expires_at, its identity) and the
    # smallest expiry threshold already alerted for it (checks/cert_alerts.py).
    cert_serial = pw.CharField(max_length=64, null=True)
    cert_alerted_days = pw.IntegerField(null=True)
    consecutive_failures = pw.IntegerField(default=0)
    # Start of the current offline streak: the downtime's started_at.
    offline_since = UTCDateTimeField(null=True)
    # Set when a downtime notification is resolved by hand while the monitor
    # still fails: no new incident until it has recovered
    # (docs/api.md#notification-life-cycle).
    alerts_suppressed = pw.BooleanField(default=False)
    # Noise control (migration 0010; docs/alerts.md): passing evaluations in a
    # row while held offline by recovery_threshold; the epoch seconds of the
    # latest up/down changes within flap_window (a short ring, at most
    # flap_threshold + 1 long); when the current flapping began (null: not
    # flapping).
    consecutive_successes = pw.IntegerField(default=0)
    state_changes = JSONField(default=list)
    flapping_since = UTCDateTimeField(null=True)
    # Location quorum (migration 0013; checks/quorum.py): the locations that
    # have reported in the open round, and when it opened (null: none open).
    round_locations = JSONField(default=list)
    round_started_at = UTCDateTimeField(null=True)
    # Bumped by every state write; state changes are conditional on it.
    state_version = pw.IntegerField(default=0)
    # Public badges (migration 0008): a read-only capability, looked up by its
    # unique index and answered only while ``badges`` is on (docs/status-pages.md).
    badges = pw.BooleanField(default=False)
    badge_token = pw.CharField(max_length=64, null=True, unique=True)
    # Bumped in the transaction of every write of the monitor's roll-ups
    # (migration 0014): the API's uptime figures are cached by it.
    rollup_version = pw.IntegerField(default=0)

    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "monitors"
        indexes = (
            (("team", "id"), False),
            (("team", "key"), True),
        )

    @property
    def checks_supported(self) -> bool:
        return self.type in CHECKED_TYPES

    @property
    def flapping(self) -> bool:
        """Alerts held: it changes state too often (docs/alerts.md#flapping)."""
        return self.flapping_since is not None


# The status filter of the monitor list.
Monitor.add_index(Monitor.index(Monitor.team, Monitor.status, name="monitors_team_status"))


class MonitorLocation(BaseModel):
    """Where and when a monitor is checked next, and who holds the claim."""

    id = NeverReusedIdField()
    # Looked up through the unique (monitor, location) index (migration 0015).
    monitor = pw.ForeignKeyField(Monitor, backref="slots", on_delete="CASCADE", index=False)
    location = pw.CharField(max_length=64)
    next_check_at = UTCDateTimeField(null=True)
    lease_owner = pw.CharField(max_length=64, null=True)
    lease_expires_at = UTCDateTimeField(null=True)
    last_status = pw.CharField(max_length=16, null=True)
    last_checked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "monitor_locations"
        indexes = (
            (("monitor", "location"), True),
            # The claim's order (next_check_at, id), walked and cut at its LIMIT.
            (("location", "next_check_at", "id"), False),
        )


class MonitorTag(BaseModel):
    """One label of a monitor (migration 0007); the list filter looks tags up by index."""

    monitor = pw.ForeignKeyField(Monitor, backref="tag_rows", on_delete="CASCADE", index=False)
    tag = pw.CharField(max_length=32, index=True)

    class Meta:
        table_name = "monitor_tags"
        primary_key = pw.CompositeKey("monitor", "tag")


class MonitorDependency(BaseModel):
    """One edge of a team's dependency graph (migration 0019; docs/monitors.md#dependencies).

    ``monitor`` depends on ``depends_on``: while the parent (or any monitor up
    its chain) has an open downtime, the child is *blocked*. Both ends cascade,
    so deleting a parent takes it out of its children's lists; the index on
    ``depends_on`` walks the graph downwards (the deps endpoint's children).
    """

    monitor = pw.ForeignKeyField(
        Monitor, backref="dependency_rows", on_delete="CASCADE", index=False
    )
    depends_on = pw.ForeignKeyField(Monitor, backref="dependent_rows", on_delete="CASCADE")

    class Meta:
        table_name = "monitor_dependencies"
        primary_key = pw.CompositeKey("monitor", "depends_on")


class AlertSettings(BaseModel):
    monitor = pw.ForeignKeyField(
        Monitor, primary_key=True, backref="alert_settings", on_delete="CASCADE"
    )
    email_enabled = pw.BooleanField(default=True)
    email_recipients = JSONField(default=list)  # empty: the owner's address
    slack_enabled = pw.BooleanField(default=False)
    slack_webhook_url = pw.CharField(max_length=2048, null=True)
    alert_on_recovery = pw.BooleanField(default=True)
    alert_threshold = pw.IntegerField(default=1)
    # Days before a certificate's expiry that each send one alert (migration 0004).
    cert_expiry_days = JSONField(default=lambda: list(DEFAULT_CERT_EXPIRY_DAYS))
    # Noise control (migration 0010; docs/alerts.md).
    recovery_threshold = pw.IntegerField(default=1)
    reminder_interval = pw.IntegerField(null=True)  # seconds; null: no reminders
    flap_threshold = pw.IntegerField(null=True, default=6)  # null: no flap detection
    flap_window = pw.IntegerField(default=3600)  # seconds
    # Ids of the owner's channels (migration 0009); checked on write, and a
    # deleted channel is taken out of every list (channel_service).
    channel_ids = JSONField(default=list)
    # Fresh locations failing that make the monitor offline (migration 0013);
    # null: a majority of its locations.
    min_failed_locations = pw.IntegerField(null=True)

    class Meta:
        table_name = "alert_settings"


class CheckRun(BaseModel):
    """One check run (up to 1 + retry_count attempts) in one location."""

    monitor = pw.ForeignKeyField(Monitor, backref="runs", on_delete="CASCADE", index=False)
    location = pw.CharField(max_length=64, default="local")
    checked_at = UTCDateTimeField()
    status = pw.CharField(max_length=16)  # online | warning | offline
    response_time = pw.IntegerField(null=True)
    status_code = pw.IntegerField(null=True)
    error = pw.TextField(null=True)
    attempts = pw.IntegerField(default=1)
    # Pings of heartbeat monitors (migration 0005); null for checks.
    kind = pw.CharField(max_length=16, null=True)  # success | start | fail | exit | log
    exit_code = pw.IntegerField(null=True)
    message = pw.TextField(null=True)
    source_ip = pw.CharField(max_length=64, null=True)
    user_agent = pw.CharField(max_length=512, null=True)
    # The monitor's status after this run (migration 0013): the quorum of its
    # locations when the run closed a round, else the status it kept.
    quorum_status = pw.CharField(max_length=16, null=True)
    # False: failed while its agent's connectivity canary failed (migration
    # 0011); kept as history, counted in no status, alert or roll-up.
    counted = pw.BooleanField(default=True)

    class Meta:
        table_name = "check_runs"
        indexes = ((("monitor", "checked_at"), False),)


class Rollup(BaseModel):
    """Aggregate of the check runs of one monitor in one time bucket.

    ``resolution`` is the bucket width in seconds (300, 3600, 86400) and
    ``bucket`` its start as epoch seconds. ``hist`` is a sparse, mergeable
    log-scaled histogram of response times (see ``uptime_server.stats.rollups``)
    and ``p95`` the percentile read from it, kept with the row.
    """

    monitor = pw.ForeignKeyField(Monitor, on_delete="CASCADE", index=False)
    resolution = pw.IntegerField()
    bucket = pw.BigIntegerField()
    checks = pw.IntegerField(default=0)
    failed = pw.IntegerField(default=0)
    rt_count = pw.IntegerField(default=0)
    rt_sum = pw.BigIntegerField(default=0)
    rt_min = pw.IntegerField(null=True)
    rt_max = pw.IntegerField(null=True)
    p95 = pw.IntegerField(null=True)
    hist = pw.TextField(default="[]")

    class Meta:
        table_name = "rollups"
        primary_key = pw.CompositeKey("monitor", "resolution", "bucket")


class Notification(BaseModel):
    id = NeverReusedIdField()
    monitor = pw.ForeignKeyField(Monitor, backref="notifications", on_delete="CASCADE")
    user = pw.ForeignKeyField(User, on_delete="CASCADE")  # the monitor's creator
    team = pw.ForeignKeyField(Team, on_delete="CASCADE", index=False)  # the monitor's team
    type = pw.CharField(max_length=16)  # NOTIFICATION_TYPES
    message = pw.TextField()
    status = pw.CharField(max_length=16)  # active | resolved
    started_at = UTCDateTimeField()
    resolved_at = UTCDateTimeField(null=True)
    duration = pw.IntegerField(null=True)
    acknowledged = pw.BooleanField(default=False)
    acknowledged_at = UTCDateTimeField(null=True)
    # Who acknowledged and who resolved it by hand (null: nobody, or the engine).
    acknowledged_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL", index=False)
    resolved_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL", index=False)
    email_sent_at = UTCDateTimeField(null=True)
    error_status_code = pw.IntegerField(null=True)
    error_response_time = pw.IntegerField(null=True)
    error_message = pw.TextField(default="")
    # cert_expiry only: one certificate's one threshold; unique, so a second
    # writer can never alert it again (engine/cert_alerts.alert_key).
    cert_alert_key = pw.CharField(max_length=255, null=True, unique=True)
    created_at = UTCDateTimeField()
    # An active downtime's next reminder (null: none due), and how many were
    # sent: the reminder sweep's index and its conditional-update guard.
    next_reminder_at = UTCDateTimeField(null=True, index=True)
    reminders_sent = pw.IntegerField(default=0)
    # A blocked monitor's downtime (and its silent recovery): the id of the
    # ancestor's open downtime that blocked it; null once its alert is sent
    # (migration 0020, docs/alerts.md#dependencies). A plain id, no key.
    suppressed_by = pw.IntegerField(null=True, column_name="suppressed_by_id")

    class Meta:
        table_name = "notifications"
        indexes = (
            (("team", "started_at"), False),
            (("monitor", "status"), False),
            # Downtime overlapping a stats window: incidents resolved after
            # its start (or still open), a short range however long the history.
            (("monitor", "type", "resolved_at"), False),
        )

    def resolve_if_active(self, at: datetime, *, by: int | None = None) -> bool:
        """Resolve this notification at *at*, unless someone already did.

        A conditional update (``status = 'active'``): of a check run, a hand
        resolve and a pause racing for one incident, exactly one wins. *by*:
        the user who resolved it by hand (None: the engine, a pause).
        """
        duration = max(0, int((at - self.started_at).total_seconds()))
        updated = (
            Notification.update(
                status="resolved",
                resolved_at=at,
                duration=duration,
                next_reminder_at=None,
                resolved_by=by,
            )
            .where((Notification.id == self.id) & (Notification.status == "active"))
            .execute()
        )
        if updated:
            self.status, self.resolved_at, self.duration = "resolved", at, duration
            self.next_reminder_at = None
        return bool(updated)


# At most one active downtime notification per monitor: the last wall behind
# the conditional state update (docs/api.md#notification-life-cycle).
Notification.add_index(
    Notification.index(
        Notification.monitor,
        unique=True,
        where=(Notification.status == "active") & (Notification.type == "downtime"),
        name="notifications_one_active",
    )
)


class Channel(BaseModel):
    """A named notification channel of one user, shared by any of their monitors.

    ``config`` holds the type's own fields (docs/channels.md), secrets
    included: they leave the server only towards the channel's service, and
    the API shows them as a hint.
    """

    id = NeverReusedIdField()
    user = pw.ForeignKeyField(User, backref="channels", on_delete="CASCADE")
    team = pw.ForeignKeyField(Team, on_delete="CASCADE", index=False)
    name = pw.CharField(max_length=200)
    type = pw.CharField(max_length=16)  # email | slack | webhook | pagerduty | apprise
    config = JSONField(default=dict)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "channels"
        indexes = ((("team", "name"), True),)  # the CLI names channels


class StatusPage(BaseModel):
    """A public status page: which monitors it shows, grouped, and what of them.

    ``groups`` is a JSON list of ``{heading, monitor_ids, tags, labels}``
    (docs/status-pages.md); ``slug`` is unique across users, as it is the URL.
    """

    id = pw.AutoField()
    user = pw.ForeignKeyField(User, backref="status_pages", on_delete="CASCADE")
    team = pw.ForeignKeyField(Team, on_delete="CASCADE")
    slug = pw.CharField(max_length=64, unique=True)
    title = pw.CharField(max_length=200)
    description = pw.TextField(default="")
    groups = JSONField(default=list)
    show_urls = pw.BooleanField(default=False)
    show_names = pw.BooleanField(default=False)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "status_pages"


class Outbox(BaseModel):
    """A message waiting for delivery; claimed with a lease like a check."""

    id = NeverReusedIdField()
    # Null for a message about no notification: a team invitation (0018).
    notification = pw.ForeignKeyField(
        Notification, backref="outbox", on_delete="CASCADE", null=True
    )
    # email | slack for the implicit per-monitor channels of the alert
    # settings; a channel's type for a row of a named channel (channel_id).
    channel = pw.CharField(max_length=16)
    channel_id = pw.IntegerField(null=True)  # no foreign key: a sent row outlives its channel
    # What the row reports: "alert" (the notification itself),
    # "acknowledge" (pagerduty only: someone acknowledged it in uptime) or
    # "invitation" (an email inviting someone to a team; no notification).
    event = pw.CharField(max_length=16, default="alert")
    recipients = JSONField(default=list)
    target = pw.CharField(max_length=2048, null=True)  # slack webhook URL
    subject = pw.TextField(default="")
    # The AlertContent as JSON: the message is rebuilt from this frozen
    # snapshot at send time, byte-identical on every retry.
    payload = JSONField(default=dict)
    message_id = pw.CharField(max_length=255, unique=True)
    status = pw.CharField(max_length=16, default="pending")  # pending | sent | failed
    attempts = pw.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField()
    last_error = pw.TextField(null=True)
    sent_at = UTCDateTimeField(null=True)
    lease_owner = pw.CharField(max_length=64, null=True)
    lease_expires_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "outbox"
        indexes = ((("status", "next_attempt_at"), False),)


class MaintenanceWindow(BaseModel):
    """A maintenance window of one user (migration 0012; docs/maintenance.md).

    Covers ``monitor_ids`` and the owner's monitors carrying all of ``tags``.
    Its schedule is one-off (``starts_at``/``ends_at``), recurring (``rrule``
    or ``cron`` in ``timezone``, each occurrence ``duration`` seconds), or
    none (opened by hand only). ``manual_start``/``manual_end`` hold a window
    opened by hand (``manual_end`` null: until ended); ``ended_at`` cuts short
    the scheduled occurrence running when it was ended by hand.
    """

    id = NeverReusedIdField()
    user = pw.ForeignKeyField(User, backref="maintenance_windows", on_delete="CASCADE")
    team = pw.ForeignKeyField(Team, on_delete="CASCADE")
    title = pw.CharField(max_length=200)
    monitor_ids = JSONField(default=list)
    tags = JSONField(default=list)
    starts_at = UTCDateTimeField(null=True)
    ends_at = UTCDateTimeField(null=True)
    rrule = pw.TextField(null=True)
    cron = pw.CharField(max_length=200, null=True)
    duration = pw.IntegerField(null=True)
    timezone = pw.CharField(max_length=64, default="UTC")
    manual_start = UTCDateTimeField(null=True)
    manual_end = UTCDateTimeField(null=True)
    ended_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "maintenance_windows"


MODELS: list[type[BaseModel]] = [
    Team,
    User,
    Membership,
    Invitation,
    AuditEvent,
    Identity,
    Session,
    ApiToken,
    OAuthState,
    CliTicket,
    Monitor,
    MonitorLocation,
    MonitorTag,
    MonitorDependency,
    AlertSettings,
    CheckRun,
    Rollup,
    Notification,
    Channel,
    Outbox,
    StatusPage,
    MaintenanceWindow,
    AgentToken,
    AgentBatch,
]
