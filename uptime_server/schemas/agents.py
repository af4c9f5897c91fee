"""Request and response models of probe agents (docs/agents.md, docs/api.md#probe-agents).

Two audiences: admins manage agents (``/agents``), and agents themselves call
the agent API (``/agent/claims``, ``/agent/leases``, ``/agent/results``) with
their agent token.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.field_rules import no_control, strip
from uptime_server.schemas.requests import Rule, parse_body
from uptime_server.schemas.tokens import MAX_EXPIRES_IN, MIN_EXPIRES_IN

MAX_CLAIM = 500  # checks per claim request (the dispatcher's batch)
MAX_RESULTS = 500  # results per batch
MAX_RENEW = 5000  # leases per renewal request

Name = Annotated[
    str,
    Field(min_length=1, max_length=100),
    BeforeValidator(strip),
    Rule("must be 1 to 100 characters", on=("string_too_short", "string_too_long")),
]


# -- managing agents (admins) --------------------------------------------------


class AgentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    location: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        description="One of the server's locations (UPTIME_LOCATIONS)."
    )
    name: Name | None = Field(None, description="Defaults to LOCATION-agent.")
    expires_in: Annotated[
        Annotated[int, Field(ge=MIN_EXPIRES_IN, le=MAX_EXPIRES_IN)] | None,
        Rule(f"must be an integer number of seconds from {MIN_EXPIRES_IN} to {MAX_EXPIRES_IN}"),
    ] = Field(None, description="Seconds until the token expires; omitted or null: never.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        return None if v is None else no_control(v, "name")


def parse_agent_create(body: Any) -> AgentCreate:
    return parse_body(AgentCreate, body, "must be a JSON object with location")


class Agent(ResponseModel):
    id: int
    name: str
    location: str
    prefix: Annotated[str, Field(description="The token's first characters, to recognise it")]
    version: Annotated[str | None, Field(description="What the agent reported; null: never seen")]
    last_seen_at: Annotated[UtcTime | None, Field(description="Its last agent API call")]
    degraded: Annotated[
        bool, Field(description="Its connectivity canary fails: its failures are not counted")
    ]
    checks_per_second: Annotated[float | None, Field(ge=0)]
    lag_seconds: Annotated[
        float | None, Field(ge=0, description="How late its most overdue check started")
    ]
    dropped_results: Annotated[
        int, Field(ge=0, description="Buffered results dropped because their lease expired")
    ]
    created_at: UtcTime
    expires_at: Annotated[
        UtcTime | None, Field(description="null: never expires; past it the agent gets 401")
    ]

    @classmethod
    def of(cls, row: Any) -> Self:
        return cls.from_row(row)


class AgentCreated(Agent):
    token: Annotated[str, Field(description="The agent token, shown this once: upa_...")]


class AgentList(ResponseModel):
    data: list[Agent]


# -- the agent API -----------------------------------------------------------------


class AgentReport(BaseModel):
    """How the agent is doing, sent with every agent API call."""

    model_config = ConfigDict(extra="ignore")

    version: Annotated[str, Field(max_length=64)] | None = None
    degraded: bool = False
    checks_per_second: Annotated[float, Field(ge=0, le=1e9)] | None = None
    lag_seconds: Annotated[float, Field(ge=0, le=1e9)] | None = None
    dropped_results: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None


class ClaimRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: Annotated[
        int, Field(ge=0, le=MAX_CLAIM), Rule(f"must be an integer from 0 to {MAX_CLAIM}")
    ] = 100
    agent: AgentReport | None = None


def parse_claim_request(body: Any) -> ClaimRequest:
    return parse_body(ClaimRequest, body, "must be a JSON object")


class LeaseRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    monitor_id: Annotated[int, Field(ge=1, le=2**63 - 1)]
    lease_owner: Annotated[str, Field(min_length=1, max_length=64)]


class RenewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    leases: Annotated[list[LeaseRef], Field(max_length=MAX_RENEW)]
    agent: AgentReport | None = None


def parse_renew_request(body: Any) -> RenewRequest:
    return parse_body(RenewRequest, body, "must be a JSON object with leases")


class ResultIn(LeaseRef):
    # Naive times pass here and are refused per result (services/agents.py),
    # so one bad result does not cost the others of its batch.
    checked_at: datetime = Field(
        description="With a zone; within [the claim's due time - lease, now + 60 s]"
    )
    passed: bool
    response_time: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = Field(
        None, description="ms; recorded at most the monitor's timeout"
    )
    status_code: Annotated[int, Field(ge=0, le=999)] | None = None
    # Any length: the server keeps the first ERROR_LIMIT printable characters.
    error: str | None = None
    attempts: Annotated[int, Field(ge=1, le=100)] = 1
    retried: bool = False
    cert_expires_at: datetime | None = None
    cert_serial: Annotated[str, Field(max_length=64)] | None = None
    counted: bool = Field(
        True, description="false: failed while the agent's canary failed (not counted)"
    )


class ResultBatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_id: Annotated[
        str,
        Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$"),
        Rule("must be 1 to 64 characters of letters, digits, . _ : -"),
    ] = Field(description="Unique per batch: a batch posted again is answered as the first time")
    results: Annotated[list[ResultIn], Field(max_length=MAX_RESULTS)]
    agent: AgentReport | None = None


def parse_result_batch(body: Any) -> ResultBatch:
    return parse_body(ResultBatch, body, "must be a JSON object with batch_id and results")


class ClaimOut(ResponseModel):
    monitor_id: int
    location: str
    lease_owner: str
    lease_expires_at: UtcTime
    due: UtcTime
    spec: Annotated[dict[str, Any], Field(description="The check to run (engine CheckSpec)")]
    block_private_targets: Annotated[
        bool,
        Field(
            description="The server's UPTIME_BLOCK_PRIVATE_TARGETS: refuse loopback and "
            "private targets of this check, as the server's own probes do"
        ),
    ]


class Claims(ResponseModel):
    data: list[ClaimOut]
    lease_seconds: int
    renew_every_seconds: float


class LeaseOut(ResponseModel):
    monitor_id: int
    lease_owner: str


class Renewed(ResponseModel):
    lease_expires_at: UtcTime
    renewed: list[LeaseOut]
    lost: Annotated[list[LeaseOut], Field(description="Leases no longer held: drop their results")]


class ResultOut(ResponseModel):
    monitor_id: int
    lease_owner: str
    status: Literal["recorded", "refused"]
    reason: Annotated[
        str | None,
        Field(
            description="Why refused: lease_lost, not_yours, checked_at_not_aware, "
            "checked_at_out_of_range, deleted, replaced"
        ),
    ] = None
    counted: bool = True


class ResultsAnswer(ResponseModel):
    batch_id: str
    duplicate: Annotated[bool, Field(description="This batch id was posted before")] = False
    recorded: int
    refused: int
    results: list[ResultOut]
