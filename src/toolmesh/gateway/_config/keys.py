"""The keys of ``toolmesh.json`` as pydantic models, and their errors in the file's terms.

Every model forbids unknown keys. ``validate`` turns the first validation error into a
``ServerConfigError`` naming the file, the key path as written (``serve.auth.tokens[0].env``),
what the key takes and, for an unknown key, the closest known one. A value is never
shown: the file may hold secrets' names next to other things.
The ``mcpServers`` object is checked by the MCP config reader, not here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolmesh._core.errors import ServerConfigError
from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH
from toolmesh._core.keys import KeyProblem, validate_keys

__all__ = [
    "AccessRuleKeys",
    "AuditKeys",
    "AuthKeys",
    "CallerRateLimitKeys",
    "CallerRuleKeys",
    "ConcurrencyLimitKeys",
    "DocumentKeys",
    "IntrospectionKeys",
    "MetricsKeys",
    "NamesKeys",
    "OAuthKeys",
    "PolicyKeys",
    "ProfileKeys",
    "PrometheusKeys",
    "RateLimitKeys",
    "ResponsesKeys",
    "ServeKeys",
    "TokenKeys",
    "validate",
]

_STRICT = ConfigDict(extra="forbid", strict=True, populate_by_name=False)


class TokenKeys(BaseModel):
    """One bearer token: where to read it (never the token itself), and its profiles."""

    model_config = _STRICT

    name: str | None = Field(None, min_length=1, max_length=200)
    env: str | None = None
    file: str | None = None
    profiles: list[str] | None = None


class AccessRuleKeys(BaseModel):
    """What a caller must hold: every scope, and one of the listed values of each claim."""

    model_config = _STRICT

    scopes: list[str] = Field(default_factory=list)
    claims: dict[str, list[str] | str] = Field(default_factory=dict)


class IntrospectionKeys(BaseModel):
    """An RFC 7662 endpoint for opaque tokens; the gateway's client secret is named by variable, never written."""

    model_config = _STRICT

    url: str
    client_id: str = Field(alias="clientId")
    client_secret_env: str = Field(alias="clientSecretEnv")


class OAuthKeys(BaseModel):
    """``serve.auth.oauth``: the gateway as an OAuth 2.1 resource server."""

    model_config = _STRICT

    issuer: str
    resource: str
    jwks_uri: str | None = Field(None, alias="jwksUri")
    introspection: IntrospectionKeys | None = None
    scopes: list[str] = Field(default_factory=list)
    profiles: dict[str, AccessRuleKeys] = Field(default_factory=dict)
    claims: list[str] = Field(default_factory=list)
    algorithms: list[str] | None = None
    leeway_seconds: int = Field(60, ge=0, le=600, alias="leewaySeconds")
    ca_file: str | None = Field(None, alias="caFile")
    fetch_timeout_seconds: int = Field(10, ge=1, le=120, alias="fetchTimeoutSeconds")
    max_jwks_bytes: int = Field(256 * 1024, ge=64, alias="maxJwksBytes")
    refresh_interval_seconds: int = Field(30, ge=0, alias="refreshIntervalSeconds")
    cache_seconds: int = Field(60, ge=0, le=3600, alias="cacheSeconds")
    refused_cache_seconds: int = Field(30, ge=0, le=600, alias="refusedCacheSeconds")
    resource_name: str | None = Field(None, alias="resourceName")


class AuthKeys(BaseModel):
    model_config = _STRICT

    tokens: list[TokenKeys] = Field(default_factory=list)
    oauth: OAuthKeys | None = None


class AuditKeys(BaseModel):
    """``serve.audit``: one JSON line per call, to a file (``"-"``: stderr)."""

    model_config = _STRICT

    file: str
    arguments: bool = False


class PrometheusKeys(BaseModel):
    """``serve.metrics.prometheus``: the scrape endpoint's own listener."""

    model_config = _STRICT

    host: str = "127.0.0.1"
    port: int = Field(9464, ge=0, le=65535)
    allowed_hosts: list[str] = Field(default_factory=list, alias="allowedHosts")


class MetricsKeys(BaseModel):
    """``serve.metrics``: OpenTelemetry metrics of calls (to the global provider, or Prometheus)."""

    model_config = _STRICT

    prometheus: PrometheusKeys | None = None


class ServeKeys(BaseModel):
    model_config = _STRICT

    transport: Literal["http", "stdio"] = "http"
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    path: str = "/mcp"
    profile: str = "default"
    stateless: bool = False
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1, alias="maxBodyBytes")
    allowed_hosts: list[str] = Field(default_factory=list, alias="allowedHosts")
    allowed_origins: list[str] = Field(default_factory=list, alias="allowedOrigins")
    auth: AuthKeys | None = None
    state: str | None = None
    state_prefix: str | None = Field(None, alias="statePrefix")
    workers: int = Field(1, ge=1, le=256)
    audit: AuditKeys | None = None
    metrics: MetricsKeys | None = None


class NamesKeys(BaseModel):
    model_config = _STRICT

    provider: str | None = None
    template: str = "{server}__{tool}"
    dedupe: bool = False


class RateLimitKeys(BaseModel):
    """``policy.rateLimits[i]``: at most ``calls`` calls of each matching tool per ``per`` seconds."""

    model_config = _STRICT

    calls: int = Field(ge=1)
    per: float = Field(1.0, gt=0, allow_inf_nan=False)
    tools: list[str] = Field(default_factory=lambda: ["*"], min_length=1)


class ConcurrencyLimitKeys(BaseModel):
    """``policy.concurrencyLimits[i]``: at most ``limit`` calls of each matching tool at once."""

    model_config = _STRICT

    limit: int = Field(ge=1)
    tools: list[str] = Field(default_factory=lambda: ["*"], min_length=1)


class CallerRateLimitKeys(BaseModel):
    """``policy.callers[i].rateLimit``: at most ``calls`` calls of each tool per ``per`` seconds, per caller."""

    model_config = _STRICT

    calls: int = Field(ge=1)
    per: int = Field(1, ge=1)
    """Seconds."""


class CallerRuleKeys(BaseModel):
    """``policy.callers[i]``: rules for the calls of matching callers (by subject, scopes and claims)."""

    model_config = _STRICT

    subjects: list[str] | None = None
    scopes: list[str] = Field(default_factory=list)
    claims: dict[str, list[str] | str] = Field(default_factory=dict)
    anonymous: bool = False
    allow_tools: list[str] | None = Field(None, alias="allowTools")
    deny_tools: list[str] | None = Field(None, alias="denyTools")
    allow_servers: list[str] | None = Field(None, alias="allowServers")
    deny_servers: list[str] | None = Field(None, alias="denyServers")
    rate_limit: CallerRateLimitKeys | None = Field(None, alias="rateLimit")


class PolicyKeys(BaseModel):
    model_config = _STRICT

    allow_tools: list[str] | None = Field(None, alias="allowTools")
    deny_tools: list[str] | None = Field(None, alias="denyTools")
    allow_servers: list[str] | None = Field(None, alias="allowServers")
    deny_servers: list[str] | None = Field(None, alias="denyServers")
    deny_destructive: bool = Field(False, alias="denyDestructive")
    rate_limits: list[RateLimitKeys] = Field(default_factory=list, alias="rateLimits")
    concurrency_limits: list[ConcurrencyLimitKeys] = Field(default_factory=list, alias="concurrencyLimits")
    approval: Literal["off"] = "off"
    callers: list[CallerRuleKeys] = Field(default_factory=list)


class ProfileKeys(BaseModel):
    model_config = _STRICT

    description: str | None = None
    tools: list[str] | None = None
    exclude_tools: list[str] | None = Field(None, alias="excludeTools")
    servers: list[str] | None = None
    native: bool = True
    read_only: bool | None = Field(None, alias="readOnly")
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = Field(None, alias="openWorld")
    search: bool = False


class ResponsesKeys(BaseModel):
    """``responses``: the ``/v1/responses`` endpoint (served when an upstream is given here or by
    ``--responses-upstream``); secrets are named by environment variable, never written here."""

    model_config = _STRICT

    upstream: str | None = None
    api_key_env: str | None = Field(None, alias="apiKeyEnv")
    secret_env: str | None = Field(None, alias="secretEnv")
    allowed_hosts: list[str] = Field(default_factory=list, alias="allowedHosts")
    profile: str = "default"
    offer_catalog: bool = Field(False, alias="offerCatalog")
    read_resource: bool = Field(False, alias="readResource")
    max_servers: int = Field(64, ge=1, alias="maxServers")
    max_tools: int = Field(128, ge=1, alias="maxTools")
    max_rounds: int = Field(10, ge=1, alias="maxRounds")
    max_result_bytes: int = Field(8 * 1024 * 1024, ge=1, alias="maxResultBytes")
    pool_size: int = Field(64, ge=1, alias="poolSize")
    pool_idle_seconds: int = Field(300, ge=1, alias="poolIdleSeconds")
    max_body_bytes: int = Field(16 * 1024 * 1024, ge=1, alias="maxBodyBytes")
    max_json_depth: int = Field(DEFAULT_MAX_DEPTH, ge=1, alias="maxJsonDepth")
    max_reply_bytes: int = Field(32 * 1024 * 1024, ge=1, alias="maxReplyBytes")


class SearchKeys(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    ranker: str | None = None


class DocumentKeys(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    schema_: str | None = Field(None, alias="$schema")
    mcpServers: dict[str, Any] | None = None  # the files' own spelling; checked by the MCP reader
    include: list[str] | str | None = None
    native: list[str] = Field(default_factory=list)
    names: NamesKeys | None = None
    policy: PolicyKeys | None = None
    profiles: dict[str, ProfileKeys] = Field(default_factory=dict)
    search: SearchKeys = Field(default_factory=lambda: SearchKeys.model_validate({}))
    serve: ServeKeys = Field(default_factory=lambda: ServeKeys.model_validate({}))
    responses: ResponsesKeys | None = None


def validate(data: Any, origin: str) -> DocumentKeys:
    """``DocumentKeys.model_validate(data)``; the first problem becomes a ``ServerConfigError``."""

    def refuse(problem: KeyProblem) -> ServerConfigError:
        if problem.unknown:
            return ServerConfigError("unknown key", key=problem.key, fix=problem.unknown_key_fix(), origin=origin)
        steps = problem.steps
        wanted = "a path string or an array of them" if steps == ("include",) else None
        return ServerConfigError(problem.must_be(wanted), key=problem.key or None, fix=_fix(steps), origin=origin)

    return validate_keys(DocumentKeys, data, refuse)


def _fix(loc: tuple[Any, ...]) -> str | None:
    head = loc[0] if loc else None
    if loc[:2] == ("policy", "approval"):
        return (
            "A gateway has no one to ask: the MCP client that calls a tool asks its user (Claude Desktop, "
            "VS Code and Cursor do). Remove the key, or refuse tools with denyTools or denyDestructive"
        )
    return {
        "include": 'Give the path of an mcpServers file (or a list of them), e.g. "claude_desktop_config.json"',
        "native": 'Give a list of "path/to/file.py:registry" or "package.module:attribute" strings',
        "profiles": 'Use {"<name>": {"tools": ["glob", ...], "servers": [...], "readOnly": true}}',
        "search": 'Use {"ranker": "path/to/file.py:NAME"}, NAME a ranker(query, rows) such as an EmbeddingRanker',
    }.get(str(head))
