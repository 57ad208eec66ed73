"""toolmesh: one registry of typed tool rows for LLM hosts — native Python tools and MCP servers' tools."""

from __future__ import annotations

from .calls import ToolCall
from .capabilities import IoMode, TaskSupport, ToolAnnotations, ToolCapabilities
from .context import FromContext, ToolContext
from .definition import ToolDefinition
from .entries import DynamicEntry, Entry, HostedEntry, McpEntry, NativeEntry
from .errors import (
    ConfigurationError,
    ErrorKind,
    NameCollisionError,
    ServerConnectionError,
    ToolExecutionError,
    ToolmeshError,
    ToolNotFoundError,
)
from .mcp import McpServer, ServerConfigError
from .names import PROVIDER_RULES, NamePolicy, NameRule
from .native import NativeTool, tool
from .output import Audio, ContentBlock, EmbeddedResource, Image, Json, ResourceLink, Text, ToolOutput, to_output
from .registry import ToolRegistry, ToolSnapshot
from .result import Disposition, ToolResult

__all__ = [
    "Audio",
    "ConfigurationError",
    "ContentBlock",
    "Disposition",
    "DynamicEntry",
    "EmbeddedResource",
    "Entry",
    "ErrorKind",
    "FromContext",
    "HostedEntry",
    "Image",
    "IoMode",
    "Json",
    "McpEntry",
    "McpServer",
    "NameCollisionError",
    "NamePolicy",
    "NameRule",
    "NativeEntry",
    "NativeTool",
    "PROVIDER_RULES",
    "ResourceLink",
    "ServerConfigError",
    "ServerConnectionError",
    "TaskSupport",
    "Text",
    "to_output",
    "tool",
    "ToolAnnotations",
    "ToolCall",
    "ToolCapabilities",
    "ToolContext",
    "ToolDefinition",
    "ToolExecutionError",
    "ToolmeshError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolSnapshot",
]
