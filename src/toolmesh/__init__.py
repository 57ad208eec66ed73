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
    "NameCollisionError",
    "NativeEntry",
    "NativeTool",
    "ResourceLink",
    "ServerConnectionError",
    "TaskSupport",
    "Text",
    "ToolAnnotations",
    "ToolCall",
    "ToolCapabilities",
    "ToolContext",
    "ToolDefinition",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolSnapshot",
    "ToolmeshError",
    "to_output",
    "tool",
]
