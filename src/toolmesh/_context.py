"""ToolContext: what one tool call knows besides its arguments.

The host builds a context per call (or lets dispatch make one). Dispatch hands the
tool its own copy, so ``ctx.metadata`` written by a tool lands on that call's
``ToolResult.metadata`` and nowhere else.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

__all__ = [
    "ElicitationCallback",
    "FromContext",
    "PartialCallback",
    "ProgressCallback",
    "SamplingCallback",
    "ToolContext",
]

DepsT = TypeVar("DepsT")

ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``await progress(progress, total, message)``: a tool reports how far it got."""
PartialCallback = Callable[[Any], Awaitable[None]]
"""``await on_partial(output)``: a streaming tool produced a partial ``ToolOutput``."""
ElicitationCallback = Callable[..., Awaitable[Any]]
"""Answers an MCP server's elicitation request on behalf of the user."""
SamplingCallback = Callable[..., Awaitable[Any]]
"""Answers an MCP server's sampling request with the host's model."""

_call_ids = itertools.count(1)


def new_call_id() -> str:
    """A process-unique call id, for calls whose host gave none."""
    return f"call_{next(_call_ids)}"


class FromContext:
    """Marker: ``Annotated[MyCtx, FromContext]`` makes a parameter receive the context."""


@dataclass(slots=True, repr=False)
class ToolContext(Generic[DepsT]):
    """Per-call context: call id, the host's dependencies, callbacks, host-only metadata."""

    call_id: str = field(default_factory=new_call_id)
    """The provider's tool-call id (or a generated one)."""
    deps: DepsT = None  # type: ignore[assignment]
    """Whatever the host wants tools to have: a db handle, the user, settings."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Host-only values the tool writes; returned on ``ToolResult.metadata``, never shown to the model."""
    timeout: float | None = None
    """Seconds this call may take; overrides the tool's own timeout."""
    progress: ProgressCallback | None = None
    """Receives ``report_progress`` calls (and MCP progress notifications)."""
    on_partial: PartialCallback | None = None
    """Receives each partial output of a streaming tool."""
    elicitation: ElicitationCallback | None = None
    """Carried to the tool (a native tool may call it); not yet routed from MCP servers' requests."""
    sampling: SamplingCallback | None = None
    """Carried to the tool (a native tool may call it); not yet routed from MCP servers' requests."""
    tool_name: str | None = None
    """The model-visible name of the row being called (set by dispatch)."""

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the host how far the call got; a no-op when nobody listens."""
        if self.progress is not None:
            await self.progress(progress, total, message)

    def fork(self, tool_name: str) -> ToolContext[DepsT]:
        """The copy a single call gets: same host values, its own empty metadata."""
        return ToolContext(
            self.call_id,
            self.deps,
            {},
            self.timeout,
            self.progress,
            self.on_partial,
            self.elicitation,
            self.sampling,
            tool_name,
        )

    @staticmethod
    def for_call(ctx: ToolContext[Any] | None, tool_name: str) -> ToolContext[Any]:
        """The context one dispatched call gets: a fork of the host's, or a new one with a fresh id."""
        if ctx is not None:
            return ctx.fork(tool_name)
        # positional: the dataclass __init__ with keywords and default factories costs twice as much
        return ToolContext(new_call_id(), None, {}, None, None, None, None, None, tool_name)

    def __repr__(self) -> str:
        return (
            f"ToolContext(call_id={self.call_id!r}, tool_name={self.tool_name!r}, "
            f"timeout={self.timeout!r}, metadata_keys={sorted(self.metadata)!r})"
        )
