"""The serving side: a registry served as one MCP endpoint per profile, over stdio or Streamable HTTP.

``McpGateway(registry, profiles=..., hooks=...)`` is the MCP face; ``HttpSettings`` and
``BearerToken`` say how it is served over HTTP (``serve_http``, ``http_app``).
"""

from __future__ import annotations

from ._gateway import McpGateway
from ._http import BearerToken, HttpSettings

__all__ = ["BearerToken", "HttpSettings", "McpGateway"]
