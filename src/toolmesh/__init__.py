"""toolmesh: one registry of typed tool rows for LLM hosts — native Python tools and MCP servers' tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._calls import ToolCall
from ._capabilities import IoMode, TaskSupport, ToolAnnotations, ToolCapabilities
from ._changes import CatalogChange
from ._context import (
    ElicitationCallback,
    ElicitationRequest,
    FromContext,
    LogCallback,
    LogMessage,
    PartialCallback,
    ProgressCallback,
    SamplingCallback,
    SamplingRequest,
    ToolContext,
)
from ._definition import ToolDefinition
from ._entries import DynamicEntry, Entry, HostedEntry, McpEntry, NativeEntry
from ._errors import (
    ConfigurationError,
    DynamicSchemaError,
    ErrorKind,
    HookError,
    NameCollisionError,
    NoCallbackError,
    OutputConversionError,
    ServerConnectionError,
    ToolExecutionError,
    ToolmeshError,
    ToolNotFoundError,
    UnsupportedContentError,
    UnsupportedToolError,
)
from ._events import (
    ElicitationEvent,
    LogEvent,
    PartialEvent,
    ProgressEvent,
    ResultEvent,
    SamplingEvent,
    ToolEvent,
)
from ._names import PROVIDER_RULES, NamePolicy, NameRule
from ._native import NativeTool, ToolOptions, tool
from ._output import Audio, ContentBlock, EmbeddedResource, Image, Json, ResourceLink, Text, ToolOutput, to_output
from ._registry import ToolRegistry
from ._result import Disposition, ToolResult
from ._snapshot import ToolSnapshot
from ._stream import ToolStream
from ._turn import CompletedCall, TurnResult, TurnStream, run_tool_calls, stream_tool_calls
from .hooks import (
    Defer,
    Fail,
    Hook,
    HookStack,
    InvalidCall,
    InvalidCallKind,
    InvalidToolCallAction,
    Keep,
    Proceed,
    Refuse,
    Repair,
    RewriteArguments,
    RewritePresentation,
    SkipWith,
    StopTurn,
    ToolCallAction,
    ToolResultAction,
)
from .mcp import McpServer, ServerConfigError

__all__ = [
    "Audio",
    "CatalogChange",
    "CompletedCall",
    "ConfigurationError",
    "ConnectionState",
    "ContentBlock",
    "Defer",
    "Disposition",
    "DynamicEntry",
    "DynamicSchemaError",
    "ElicitationCallback",
    "ElicitationEvent",
    "ElicitationRequest",
    "EmbeddedResource",
    "Entry",
    "ErrorKind",
    "Fail",
    "FromContext",
    "Hook",
    "HookError",
    "HookStack",
    "HostedEntry",
    "Image",
    "InvalidCall",
    "InvalidCallKind",
    "InvalidToolCallAction",
    "IoMode",
    "Json",
    "LogCallback",
    "LogEvent",
    "LogMessage",
    "Keep",
    "McpConnection",
    "McpEntry",
    "McpServer",
    "NameCollisionError",
    "NamePolicy",
    "NameRule",
    "NativeEntry",
    "NativeTool",
    "NoCallbackError",
    "OutputConversionError",
    "PartialCallback",
    "PartialEvent",
    "Proceed",
    "ProgressCallback",
    "ProgressEvent",
    "PROVIDER_RULES",
    "Refuse",
    "Repair",
    "ResourceLink",
    "ResultEvent",
    "RewriteArguments",
    "RewritePresentation",
    "run_tool_calls",
    "SamplingCallback",
    "SamplingEvent",
    "SamplingRequest",
    "ServerConfigError",
    "ServerConnectionError",
    "SkipWith",
    "StopTurn",
    "stream_tool_calls",
    "TaskSupport",
    "Text",
    "to_output",
    "tool",
    "ToolAnnotations",
    "ToolCall",
    "ToolCallAction",
    "ToolCapabilities",
    "ToolContext",
    "ToolDefinition",
    "ToolEvent",
    "ToolExecutionError",
    "ToolmeshError",
    "ToolNotFoundError",
    "ToolOptions",
    "ToolOutput",
    "ToolRegistry",
    "ToolResult",
    "ToolResultAction",
    "ToolSnapshot",
    "ToolStream",
    "TurnResult",
    "TurnStream",
    "UnsupportedContentError",
    "UnsupportedToolError",
]

if TYPE_CHECKING:
    from .mcp._connection import ConnectionState, McpConnection

_LAZY = {"ConnectionState": "toolmesh.mcp._connection", "McpConnection": "toolmesh.mcp._connection"}


def __getattr__(name: str) -> Any:
    """``McpConnection`` and ``ConnectionState`` load the MCP client SDK (slow): import them on use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolmesh' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)
