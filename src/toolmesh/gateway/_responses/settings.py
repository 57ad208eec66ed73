"""ResponsesSettings: how the ``/v1/responses`` endpoint reaches its upstream model and declared servers."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolmesh._core.errors import ConfigurationError
from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH

from .urls import allowed_host_problem

if TYPE_CHECKING:
    from toolmesh.gateway._config.keys import ResponsesKeys

__all__ = ["ResponsesSettings", "settings_from_config"]

_AT_LEAST_ONE = (
    "max_servers",
    "max_tools",
    "max_rounds",
    "max_result_bytes",
    "pool_size",
    "max_body_bytes",
    "max_json_depth",
    "max_reply_bytes",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponsesSettings:
    """The Responses endpoint's upstream, URL policy, limits and approval secret.

    Example:
        >>> settings = ResponsesSettings(upstream="http://127.0.0.1:8000/v1")
        >>> settings.max_rounds, settings.max_servers
        (10, 64)
    """

    upstream: str
    """The Chat Completions base URL of the model server (``http://127.0.0.1:8000/v1`` for vLLM)."""
    api_key: str | None = field(default=None, repr=False)
    """The upstream's API key (None: a placeholder, as self-hosted servers need none)."""
    path: str = "/v1/responses"
    """Where the endpoint is served."""
    allowed_hosts: tuple[str, ...] = ()
    """Hosts request-declared servers may be on besides loopback: names (``mcp.example.com``,
    ``*.example.com``) and IP networks (``10.0.0.0/8``; a private address is reached only when listed)."""
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    """The key binding ``mcp_approval_request`` ids to their call (random per process by default:
    give every replica the same one so an approval can come back to any of them)."""
    profile: str = "default"
    """The gateway profile whose rows every request is offered as gateway-owned tools."""
    offer_catalog: bool = False
    """Offer the profile's rows to every request (off by default: they run without approval, which
    applies to request-declared servers only, so an operator opts in)."""
    read_resource: bool = False
    """Offer a ``read_mcp_resource(server_label, uri)`` tool reading the declared servers' resources."""
    max_servers: int = 64
    """Declared servers per request."""
    max_tools: int = 128
    """Tools discovered per request, over every declared server."""
    max_rounds: int = 10
    """Upstream calls that may follow tool results in one response (then ``incomplete``)."""
    max_result_bytes: int = 8 * 1024 * 1024
    """Bytes of tool results one response may retain (one larger result fails its call)."""
    connect_timeout: float = 30.0
    """Seconds to connect to a declared server and list its tools."""
    call_timeout: float = 60.0
    """Seconds one declared server's tool call may take."""
    pool_idle_seconds: float = 300.0
    """An unused pooled connection to a declared server closes after this long."""
    pool_size: int = 64
    """Pooled connections kept at most (the least recently used idle one closes first)."""
    max_body_bytes: int = 16 * 1024 * 1024
    """Bytes of one request body (over it: 413, and the connection is closed without reading the rest)."""
    max_json_depth: int = DEFAULT_MAX_DEPTH
    """Levels of nested arrays and objects read in a request body or an upstream reply (deeper: a 400, or
    a failed response), checked before the JSON is parsed."""
    max_reply_bytes: int = 32 * 1024 * 1024
    """Bytes of one upstream reply: a Chat Completions answer or error, or all the events of a streamed one
    (over it: a failed response)."""

    def __post_init__(self) -> None:
        if not self.upstream.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"the upstream (--responses-upstream, responses.upstream in the config, ResponsesSettings.upstream) "
                f"must be an http(s) URL such as 'http://127.0.0.1:8000/v1', "
                f"got {self.upstream!r}"
            )
        for name in _AT_LEAST_ONE:
            if getattr(self, name) < 1:
                raise ConfigurationError(f"ResponsesSettings.{name} must be at least 1, got {getattr(self, name)!r}")
        for name in ("connect_timeout", "call_timeout", "pool_idle_seconds"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"ResponsesSettings.{name} must be positive seconds")
        if len(self.secret) < 16:
            raise ConfigurationError("ResponsesSettings.secret must be at least 16 bytes")
        for index, entry in enumerate(self.allowed_hosts):
            problem = allowed_host_problem(entry)
            if problem is not None:
                raise ConfigurationError(f"responses.allowedHosts[{index}]: {problem}")
        if not self.path.startswith("/"):
            raise ConfigurationError(f"ResponsesSettings.path must start with '/', got {self.path!r}")


def settings_from_config(keys: ResponsesKeys | None, upstream: str | None = None) -> ResponsesSettings | None:
    """The settings of a config's ``responses`` section (``upstream`` overrides its URL); None when no upstream.

    The API key and the approval secret are read from the environment variables the
    section names (``apiKeyEnv``, ``secretEnv``).

    Raises:
        ConfigurationError: for a named variable that is unset, or settings out of range.
    """
    url = upstream or (keys.upstream if keys is not None else None)
    if url is None:
        return None
    if keys is None:
        return ResponsesSettings(upstream=url)
    extra: dict[str, Any] = {}
    if keys.api_key_env:
        extra["api_key"] = _env(keys.api_key_env, "responses.apiKeyEnv")
    if keys.secret_env:
        extra["secret"] = _env(keys.secret_env, "responses.secretEnv").encode("utf-8")
        if len(extra["secret"]) < 16:
            raise ConfigurationError(
                f"responses.secretEnv: ${keys.secret_env} holds {len(extra['secret'])} bytes; the approval secret "
                "must be at least 16 (make one with: python -c 'import secrets; print(secrets.token_hex(32))')"
            )
    return ResponsesSettings(
        upstream=url,
        allowed_hosts=tuple(keys.allowed_hosts),
        profile=keys.profile,
        offer_catalog=keys.offer_catalog,
        read_resource=keys.read_resource,
        max_servers=keys.max_servers,
        max_tools=keys.max_tools,
        max_rounds=keys.max_rounds,
        max_result_bytes=keys.max_result_bytes,
        pool_size=keys.pool_size,
        pool_idle_seconds=float(keys.pool_idle_seconds),
        max_body_bytes=keys.max_body_bytes,
        max_json_depth=keys.max_json_depth,
        max_reply_bytes=keys.max_reply_bytes,
        **extra,
    )


def _env(name: str, key: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ConfigurationError(f"{key}: the environment variable {name!r} is not set; set it, or remove the key")
    return value
