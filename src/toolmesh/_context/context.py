"""ToolContext: what one tool call knows besides its arguments.

The host builds a context per call (or lets dispatch make one). Dispatch hands the
tool its own copy, so ``ctx.metadata`` written by a tool lands on that call's
``ToolResult.metadata`` and nowhere else.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .asking import elicit, log, sample
from .identity import Identity
from .requests import (
    ElicitationCallback,
    ElicitationRequest,
    LogCallback,
    LogMessage,
    PartialCallback,
    ProgressCallback,
    SamplingCallback,
    SamplingRequest,
)

if TYPE_CHECKING:
    import mcp_types
    from pydantic import BaseModel

__all__ = [
    "ElicitationCallback",
    "ElicitationRequest",
    "FromContext",
    "Identity",
    "LogCallback",
    "LogMessage",
    "PartialCallback",
    "ProgressCallback",
    "SamplingCallback",
    "SamplingRequest",
    "ToolContext",
]

DepsT = TypeVar("DepsT")

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
    """Answers this call's elicitation requests; overrides the registry's ``elicitation``."""
    sampling: SamplingCallback | None = None
    """Answers this call's sampling requests; overrides the registry's ``sampling``."""
    tool_name: str | None = None
    """The model-visible name of the row being called (set by dispatch)."""
    on_log: LogCallback | None = None
    """Receives this call's log messages (they also go to the ``toolmesh.server.<label>`` logger)."""
    as_task: bool = False
    """Run an MCP tool whose ``taskSupport`` is ``"optional"`` as a task (``"required"`` always is)."""
    retry: int = 0
    """How many earlier calls of this tool failed and were sent back to the model to retry, as the
    host's agent framework counts them (pydantic-ai's ``RunContext.retry``); 0 when nobody counts."""
    identity: Identity | None = None
    """Who made the call, as the gateway authenticated them (a static token's name, an OAuth token's
    subject, client, scopes and chosen claims; never the token). None in library use and behind a
    gateway that authenticates nobody. Hooks and policy read it to decide per caller."""

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the host how far the call got; a no-op when nobody listens."""
        if self.progress is not None:
            await self.progress(progress, total, message)

    async def elicit(
        self,
        message: str | mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams,
        schema: type[BaseModel] | Mapping[str, Any] | None = None,
        *,
        url: str | None = None,
        elicitation_id: str | None = None,
    ) -> mcp_types.ElicitResult:
        """Ask the user for input through the host, as an MCP server's elicitation would.

        ``ctx.elicit("Your name?", NameForm)`` asks a form (a pydantic model class or a JSON
        Schema dict; ``content`` of the answer holds the values); ``ctx.elicit("Sign in",
        url="https://...")`` sends the user to a URL; an ``ElicitRequestFormParams`` /
        ``ElicitRequestURLParams`` is passed on as it is. The call's ``elicitation`` callback
        answers, else the registry's.

        Raises:
            NoCallbackError: neither has an elicitation callback; uncaught, the call fails and
                the model is told what the tool wanted.
        """
        return await elicit(self, message, schema, url, elicitation_id)

    async def sample(
        self,
        messages: str | Sequence[str | mcp_types.SamplingMessage] | mcp_types.CreateMessageRequestParams,
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
    ) -> mcp_types.CreateMessageResult:
        """Ask the host's model for a completion, as an MCP server's sampling request would.

        ``messages`` is a user message (a string), a list of strings (user messages) and
        ``SamplingMessage`` objects, or a whole ``CreateMessageRequestParams``. The call's
        ``sampling`` callback answers, else the registry's.

        Raises:
            NoCallbackError: neither has a sampling callback; uncaught, the call fails and the
                model is told what the tool wanted.
        """
        return await sample(self, messages, max_tokens, system_prompt, temperature)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Log a message of this call: to the ``toolmesh.tool.<name>`` logger and to ``on_log``.

        ``level`` is an MCP level (debug, info, notice, warning, error, critical, alert,
        emergency; any case; ``warn`` and ``fatal`` are read as warning and critical);
        ``data`` any JSON value. ``on_log`` receives a ``LogMessage`` with
        ``server=None``, as it receives an MCP server's messages for its calls.

        Raises:
            ValueError: ``level`` is not an MCP level.
        """
        await log(self, level, data, logger)

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
            self.on_log,
            self.as_task,
            self.retry,
            self.identity,
        )

    @staticmethod
    def for_call(ctx: ToolContext[Any] | None, tool_name: str) -> ToolContext[Any]:
        """The context one dispatched call gets: a fork of the host's, or a new one with a fresh id."""
        if ctx is not None:
            return ctx.fork(tool_name)
        # positional: the dataclass __init__ with keywords and default factories costs twice as much
        return ToolContext(new_call_id(), None, {}, None, None, None, None, None, tool_name, None, False, 0, None)

    def __repr__(self) -> str:
        return (
            f"ToolContext(call_id={self.call_id!r}, tool_name={self.tool_name!r}, "
            f"timeout={self.timeout!r}, metadata_keys={sorted(self.metadata)!r})"
        )
