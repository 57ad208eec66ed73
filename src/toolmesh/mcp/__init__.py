"""MCP servers as typed rows: server specs, connections, discovery, the gateway."""

from __future__ import annotations

from .config import McpServer, McpServerOptions, ServerConfigError, check_allowed_hosts

__all__ = ["McpServer", "McpServerOptions", "ServerConfigError", "check_allowed_hosts"]
