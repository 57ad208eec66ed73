"""toolmesh: one registry of typed tool rows for LLM hosts — native Python tools and MCP servers' tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolmesh._context.context import (
    ElicitationCallback,
    ElicitationRequest,
    FromContext,
    Identity,
    LogCallback,
    LogMessage,
    PartialCallback,
    ProgressCallback,
    SamplingCallback,
    SamplingRequest,
    ToolContext,
)
from toolmesh._core.calls import ToolCall
from toolmesh._core.capabilities import IoMode, TaskSupport, ToolAnnotations, ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import (
    ConfigurationError,
    DynamicSchemaError,
    EmbeddingError,
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
from toolmesh._core.names import PROVIDER_RULES, NamePolicy, NameRule
from toolmesh._core.output import (
    Audio,
    ContentBlock,
    EmbeddedResource,
    Image,
    Json,
    ResourceLink,
    Text,
    ToolOutput,
    to_output,
)
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._dispatch.changes import CatalogChange
from toolmesh._dispatch.events import (
    ElicitationEvent,
    LogEvent,
    PartialEvent,
    ProgressEvent,
    ResultEvent,
    SamplingEvent,
    ToolEvent,
)
from toolmesh._dispatch.ledger import CalledTool, FoundTool
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.stream import ToolStream
from toolmesh._dispatch.turn import CompletedCall, TurnResult, TurnStream, run_tool_calls, stream_tool_calls
from toolmesh._rows.native import NativeTool, ToolOptions, tool
from toolmesh._rows.rows import DynamicEntry, Entry, HostedEntry, McpEntry, NativeEntry
from toolmesh._search.embedding import AsyncEmbeddingRanker, EmbeddingRanker
from toolmesh._search.matches import AsyncRanker, Ranker, ToolMatch
from toolmesh._search.policy import DeferPolicy

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
    "AsyncEmbeddingRanker",
    "AsyncRanker",
    "Audio",
    "CalledTool",
    "CatalogChange",
    "CompletedCall",
    "ConfigurationError",
    "ConnectionState",
    "ContentBlock",
    "Defer",
    "DeferPolicy",
    "Disposition",
    "DynamicEntry",
    "DynamicSchemaError",
    "ElicitationCallback",
    "ElicitationEvent",
    "ElicitationRequest",
    "EmbeddedResource",
    "EmbeddingError",
    "EmbeddingRanker",
    "Entry",
    "ErrorKind",
    "Fail",
    "FoundTool",
    "FromContext",
    "Hook",
    "HookError",
    "HookStack",
    "HostedEntry",
    "Identity",
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
    "Ranker",
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
    "ToolMatch",
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
    from toolmesh.mcp._client.connection import ConnectionState, McpConnection


def __getattr__(name: str) -> Any:
    """``McpConnection`` and ``ConnectionState`` load the MCP client SDK (slow): imported on use."""
    from . import mcp

    if name in mcp.LAZY_NAMES:
        return getattr(mcp, name)
    raise AttributeError(f"module 'toolmesh' has no attribute {name!r}")
