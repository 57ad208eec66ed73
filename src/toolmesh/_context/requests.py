"""The requests a tool makes of its host during a call, and the callbacks that answer them.

A leaf of ``_context``: the request types, the callback types, and ``Asker``, the part
of a call's context that asking needs, so that asking (``asking``) and the context
(``context``) both build on this module instead of on each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "Asker",
    "ElicitationCallback",
    "ElicitationRequest",
    "LogCallback",
    "LogMessage",
    "PartialCallback",
    "ProgressCallback",
    "SamplingCallback",
    "SamplingRequest",
]

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``await progress(progress, total, message)``: a tool reports how far it got."""
PartialCallback = Callable[[Any], Awaitable[None]]
"""``await on_partial(output)``: a streaming tool produced a partial ``ToolOutput``."""


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A tool asks the user for input: an MCP server during a call, or a native tool's ``ctx.elicit``."""

    params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams
    """What is asked, as MCP types it: a form (message + requested schema) or a URL to open."""
    call_id: str
    """The id of the tool call that asked."""
    tool_name: str | None
    """The model-visible name of the row that asked."""
    server: str | None
    """The label of the MCP server that asked; None for a native tool."""


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """A tool asks the host's model for a completion: an MCP server or a native tool's ``ctx.sample``."""

    params: mcp_types.CreateMessageRequestParams
    """The messages, system prompt, token limit and model preferences, as MCP types them."""
    call_id: str
    """The id of the tool call that asked."""
    tool_name: str | None
    """The model-visible name of the row that asked."""
    server: str | None
    """The label of the MCP server that asked; None for a native tool."""


@dataclass(frozen=True, slots=True)
class LogMessage:
    """A log message a tool sent during a call (MCP ``notifications/message``)."""

    level: str
    """The MCP level: debug, info, notice, warning, error, critical, alert or emergency."""
    data: Any
    """What was logged (any JSON value), already redacted of configured secrets."""
    logger: str | None
    """The name the server gave its logger, if any."""
    call_id: str | None
    """The id of the tool call it belongs to, when known."""
    tool_name: str | None
    """The model-visible name of that call's row, when known."""
    server: str | None
    """The label of the MCP server that sent it; None for a native tool."""


ElicitationCallback = Callable[[ElicitationRequest], Awaitable["mcp_types.ElicitResult"]]
"""``await answer(request) -> ElicitResult``: answers an elicitation on behalf of the user."""
SamplingCallback = Callable[[SamplingRequest], Awaitable["mcp_types.CreateMessageResult"]]
"""``await answer(request) -> CreateMessageResult``: answers a sampling request with the host's model."""
LogCallback = Callable[[LogMessage], Awaitable[None]]
"""``await on_log(message)``: receives the log messages of one call."""


class Asker(Protocol):
    """What asking reads and fills on a call's context (``ToolContext`` is one)."""

    call_id: str
    tool_name: str | None
    elicitation: ElicitationCallback | None
    sampling: SamplingCallback | None
    on_log: LogCallback | None
