"""The gateway: serve a catalog as one MCP endpoint (``toolmesh serve``).

``GatewayConfig.load("toolmesh.json")`` reads what to serve: the upstream MCP servers,
native tools, names, policy, profiles and serve settings.
"""

from __future__ import annotations

from ._config import GatewayConfig, ServeSettings
from ._profiles import DEFAULT_PROFILE, Profile
from ._tokens import TokenSource

__all__ = ["DEFAULT_PROFILE", "GatewayConfig", "Profile", "ServeSettings", "TokenSource"]
