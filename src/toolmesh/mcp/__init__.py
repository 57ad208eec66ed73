"""MCP servers as typed rows: server specs, connections, discovery, the gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ServerConfigError
from .._metadata import (
    MCP_ARGUMENTS,
    MCP_ASKED,
    MCP_META,
    MCP_RESULT,
    MCP_SERVER_LABEL,
    MCP_TASK_ID,
    MCP_WIRE_NAME,
)
from ._config import McpServer, McpServerOptions
from ._hosts import check_allowed_hosts, redact_url

if TYPE_CHECKING:
    from ._connection import ConnectionState, McpConnection

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

_LAZY = {"ConnectionState": "_connection", "McpConnection": "_connection"}
"""Names whose modules import the MCP SDK's client (~0.4 s): loaded on first use only."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
