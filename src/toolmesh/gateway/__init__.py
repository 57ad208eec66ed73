"""The serving side: a registry served as one MCP endpoint per profile, over stdio or Streamable HTTP.

``McpGateway(registry, profiles=..., hooks=...)`` is the MCP face; ``HttpSettings`` and
``BearerToken`` say how it is served over HTTP (``serve_http``, ``http_app``).
``GatewayConfig.load("toolmesh.json")`` reads what ``toolmesh serve`` serves: the
upstream MCP servers, native tools, names, policy, profiles and serve settings.
``ResponsesEndpoint`` (``ResponsesSettings``) serves ``POST /v1/responses`` beside ``/mcp``:
the OpenAI Responses API, with request-declared MCP servers run server-side, for any
Chat Completions upstream (``mount_responses(app, endpoint)``).
``StateBackend`` is where state shared across replicas lives: ``MemoryState`` (one process,
the default) or ``RedisState`` (every replica given the same Redis URL and prefix);
``open_state(url)`` opens the one a setting names and proves it answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolmesh._state.backend import RESYNC, Resync, StateBackend, UsesState
from toolmesh._state.errors import StateConfigError, StateUnavailableError
from toolmesh._state.memory import MemoryState
from toolmesh._state.opening import open_state
from toolmesh._state.redis_state import RedisState
from toolmesh.gateway._config.config import GatewayConfig, ServeSettings
from toolmesh.gateway._config.http_settings import BearerToken, HttpSettings
from toolmesh.gateway._config.profiles import DEFAULT_PROFILE, Profile
from toolmesh.gateway._config.tokens import TokenSource
from toolmesh.gateway._mcp_face.gateway import McpGateway
from toolmesh.gateway._responses.settings import ResponsesSettings

__all__ = [
    "DEFAULT_PROFILE",
    "RESYNC",
    "BearerToken",
    "GatewayConfig",
    "HttpSettings",
    "McpGateway",
    "MemoryState",
    "Profile",
    "RedisState",
    "ResponsesEndpoint",
    "ResponsesSettings",
    "Resync",
    "ServeSettings",
    "StateBackend",
    "StateConfigError",
    "StateUnavailableError",
    "TokenSource",
    "UsesState",
    "mount_responses",
    "open_state",
]

if TYPE_CHECKING:
    from toolmesh.gateway._responses.app import ResponsesEndpoint
    from toolmesh.gateway._responses.app import mount as mount_responses


def __getattr__(name: str) -> Any:
    """``ResponsesEndpoint`` and ``mount_responses`` need the ``openai`` package (the ``responses`` extra):
    imported on use, so the MCP face works without it."""
    if name in ("ResponsesEndpoint", "mount_responses"):
        from toolmesh.gateway._responses import app as _responses_app

        return getattr(_responses_app, "mount" if name == "mount_responses" else name)
    raise AttributeError(f"module 'toolmesh.gateway' has no attribute {name!r}")
