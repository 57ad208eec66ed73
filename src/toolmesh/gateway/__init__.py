"""The serving side: a registry served as one MCP endpoint per profile, over stdio or Streamable HTTP.

``McpGateway(registry, profiles=..., hooks=...)`` is the MCP face; ``HttpSettings`` and
``BearerToken`` say how it is served over HTTP (``serve_http``, ``http_app``).
``GatewayConfig.load("toolmesh.json")`` reads what ``toolmesh serve`` serves: the
upstream MCP servers, native tools, names, policy, profiles and serve settings.
"""

from __future__ import annotations

from ._config import GatewayConfig, ServeSettings
from ._gateway import McpGateway
from ._http import BearerToken, HttpSettings
from ._profiles import DEFAULT_PROFILE, Profile
from ._tokens import TokenSource

__all__ = [
    "DEFAULT_PROFILE",
    "BearerToken",
    "GatewayConfig",
    "HttpSettings",
    "McpGateway",
    "Profile",
    "ServeSettings",
    "TokenSource",
]
