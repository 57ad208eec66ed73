"""The events of one streamed call (``registry.stream``): what happened while it ran, then its result.

Each event says which call it belongs to (``call_id``) and which row ran it
(``tool_name``), so events of several streams can be merged into one feed. The payload
comes first, so ``match`` reads naturally::

    match event:
        case ProgressEvent(progress, total, message): ...
        case PartialEvent(output): ...
        case ResultEvent(result): ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from toolmesh._context.context import ElicitationRequest, LogMessage, SamplingRequest
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import ToolResult

__all__ = [
    "ElicitationEvent",
    "LogEvent",
    "PartialEvent",
    "ProgressEvent",
    "ResultEvent",
    "SamplingEvent",
    "ToolEvent",
]


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """The tool reported how far it got (``ctx.report_progress``, MCP progress, a task's status)."""

    progress: float
    """How far the call got; grows with each report."""
    total: float | None
    """What ``progress`` counts up to, when the tool knows."""
    message: str | None
    """What the tool is doing now, if it said."""
    call_id: str
    """The id of the call."""
    tool_name: str
    """The model-visible name of the row that runs it."""


@dataclass(frozen=True, slots=True)
class PartialEvent:
    """A streaming native tool (an async generator) produced one more piece of its output."""

    output: ToolOutput
    """This piece; the final result's output is all the pieces, in order."""
    call_id: str
    """The id of the call."""
    tool_name: str
    """The model-visible name of the row that runs it."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """The tool logged a message (MCP ``notifications/message``, or a native tool's ``ctx.log``)."""

    message: LogMessage
    """The level, the data and who logged it."""
    call_id: str
    """The id of the call."""
    tool_name: str
    """The model-visible name of the row that runs it."""


@dataclass(frozen=True, slots=True)
class ElicitationEvent:
    """The tool asked the user for input; the host's elicitation callback is answering it.

    Emitted just before the callback runs, and only when there is one (the call's
    ``ctx.elicitation`` or the registry's default): without a callback the tool gets its
    "no callback" error at once and no event is emitted.
    """

    request: ElicitationRequest
    """What was asked."""
    call_id: str
    """The id of the call."""
    tool_name: str
    """The model-visible name of the row that runs it."""


@dataclass(frozen=True, slots=True)
class SamplingEvent:
    """The tool asked the host's model for a completion; the host's sampling callback is answering it.

    Emitted just before the callback runs, and only when there is one (as ``ElicitationEvent``).
    """

    request: SamplingRequest
    """What was asked."""
    call_id: str
    """The id of the call."""
    tool_name: str
    """The model-visible name of the row that runs it."""


@dataclass(frozen=True, slots=True)
class ResultEvent:
    """The call is over: the same ``ToolResult`` ``dispatch`` returns. Always the last event."""

    result: ToolResult
    """The call's result (failed for an unknown name, bad arguments, a timeout...)."""

    @property
    def call_id(self) -> str:
        """The id of the call."""
        return self.result.call_id

    @property
    def tool_name(self) -> str:
        """The model-visible name the call asked for."""
        return self.result.name


ToolEvent: TypeAlias = ProgressEvent | PartialEvent | LogEvent | ElicitationEvent | SamplingEvent | ResultEvent
"""Any event of a streamed call."""
