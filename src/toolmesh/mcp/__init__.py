"""MCP servers as typed rows: server specs, connections, discovery, the gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolmesh._core.errors import ServerConfigError
from toolmesh._core.metadata import (
    MCP_ARGUMENTS,
    MCP_ASKED,
    MCP_META,
    MCP_RESULT,
    MCP_SERVER_LABEL,
    MCP_TASK_ID,
    MCP_WIRE_NAME,
)
from toolmesh.mcp._spec.hosts import check_allowed_hosts, redact_url
from toolmesh.mcp._spec.server import McpServer, McpServerOptions

if TYPE_CHECKING:
    from toolmesh.mcp._client.connection import ConnectionState, McpConnection

__all__ = [
    "MCP_ARGUMENTS",
    "MCP_ASKED",
    "MCP_META",
    "MCP_RESULT",
    "MCP_SERVER_LABEL",
    "MCP_TASK_ID",
    "MCP_WIRE_NAME",
    "ConnectionState",
    "McpConnection",
    "McpServer",
    "McpServerOptions",
    "ServerConfigError",
    "check_allowed_hosts",
    "redact_url",
]

LAZY_NAMES = frozenset({"ConnectionState", "McpConnection"})
"""Names whose module imports the MCP SDK's client (~0.4 s): loaded on first use only."""


def __getattr__(name: str) -> Any:
    if name not in LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._client import connection

    return getattr(connection, name)
