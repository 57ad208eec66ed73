"""The hook protocol and its typed actions: what each event of a ``Hook`` may answer.

The public face is ``toolmesh.hooks``, whose docstring has the table of events and actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import ToolResult
from toolmesh._rows.rows import Entry

__all__ = [
    "CALL_ACTIONS",
    "DEFER",
    "Defer",
    "FAIL",
    "Fail",
    "Hook",
    "INVALID_ACTIONS",
    "InvalidCall",
    "InvalidCallKind",
    "InvalidToolCallAction",
    "KEEP",
    "Keep",
    "PROCEED",
    "Proceed",
    "RESULT_ACTIONS",
    "Refuse",
    "Repair",
    "RewriteArguments",
    "RewritePresentation",
    "SkipWith",
    "StopTurn",
    "ToolCallAction",
    "ToolResultAction",
]

# -- actions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proceed:
    """``on_tool_call``: no objection; the next hook decides, then the tool runs."""


@dataclass(frozen=True, slots=True)
class RewriteArguments:
    """``on_tool_call``: run the call with these arguments instead; the next hook sees them."""

    arguments: Mapping[str, Any] | str
    """The new arguments: a mapping, or JSON text of an object."""


@dataclass(frozen=True, slots=True)
class SkipWith:
    """``on_tool_call`` / ``on_invalid_tool_call``: answer the call without running the tool.

    Give ``output`` (disposition ``skipped``; ``to_output(value)`` converts any value)
    or a complete ``result`` (returned as is, with the call's id).
    """

    output: ToolOutput | str | None = None
    """What the model is shown instead of the tool's output."""
    result: ToolResult | None = None
    """A whole result to return instead (e.g. from a cache)."""

    def __post_init__(self) -> None:
        if (self.output is None) == (self.result is None):
            raise ValueError("SkipWith needs exactly one of output=... or result=...")


@dataclass(frozen=True, slots=True)
class Refuse:
    """``on_tool_call``: do not run the call; disposition ``refused``, ``reason`` shown to the model."""

    reason: str
    """Why, in words for the model (it is the result's presentation and model feedback)."""
    kind: ErrorKind = ErrorKind.REFUSED
    """The error kind on the result (``rate_limited`` for a rate limit, for instance)."""
    retryable: bool | None = None
    """Whether retrying later may succeed; the kind's default when None."""


@dataclass(frozen=True, slots=True)
class StopTurn:
    """``on_tool_call`` / ``on_tool_result``: stop the turn.

    From ``on_tool_call`` the call is not run (disposition ``skipped``); from
    ``on_tool_result`` the call's result stands. Calls whose tools have not started
    are ``skipped``; tools already running finish and keep their results.
    """

    reason: str = ""
    """Why; on ``TurnResult.stop_reason`` and in the skipped results the model is shown."""


@dataclass(frozen=True, slots=True)
class Keep:
    """``on_tool_result``: leave the result as it is; the next hook decides."""


@dataclass(frozen=True, slots=True)
class RewritePresentation:
    """``on_tool_result``: show the model this instead; raw output and metadata stay untouched."""

    output: ToolOutput | str
    """The new presentation (a str becomes one text block)."""


@dataclass(frozen=True, slots=True)
class Fail:
    """``on_invalid_tool_call``: the call fails with the problem's error."""

    feedback: str | None = None
    """Text the model is shown instead of the problem's own feedback."""


@dataclass(frozen=True, slots=True)
class Repair:
    """``on_invalid_tool_call``: run the call again with another name and/or arguments.

    The repaired call goes through ``on_tool_call`` hooks like any call (so policy
    applies to the name it was repaired to). A call is repaired at most once: if
    the repaired call is invalid too, it fails with that problem.
    """

    name: str | None = None
    """The tool to call instead (None keeps the name)."""
    arguments: Mapping[str, Any] | str | None = None
    """The arguments to use instead: a mapping or JSON text (None keeps them)."""

    def __post_init__(self) -> None:
        if self.name is None and self.arguments is None:
            raise ValueError("Repair needs name=... and/or arguments=...")


@dataclass(frozen=True, slots=True)
class Defer:
    """``on_invalid_tool_call``: no opinion; the next hook decides (the last default is ``Fail()``)."""


ToolCallAction: TypeAlias = Proceed | RewriteArguments | SkipWith | Refuse | StopTurn
"""What ``on_tool_call`` may return."""
ToolResultAction: TypeAlias = Keep | RewritePresentation | StopTurn
"""What ``on_tool_result`` may return."""
InvalidToolCallAction: TypeAlias = Defer | Fail | Repair | SkipWith
"""What ``on_invalid_tool_call`` may return."""

CALL_ACTIONS = (Proceed, RewriteArguments, SkipWith, Refuse, StopTurn)
RESULT_ACTIONS = (Keep, RewritePresentation, StopTurn)
INVALID_ACTIONS = (Defer, Fail, Repair, SkipWith)

PROCEED = Proceed()
KEEP = Keep()
DEFER = Defer()
FAIL = Fail()


# -- the problem of an invalid call ---------------------------------------------------


class InvalidCallKind(StrEnum):
    """What is wrong with a call that cannot run as the model wrote it."""

    UNKNOWN_NAME = "unknown_name"
    """No row of the snapshot has the name."""
    INVALID_JSON = "invalid_json"
    """The arguments are not JSON (the provider's text is on ``call.arguments``)."""
    INVALID_ARGUMENTS = "invalid_arguments"
    """The arguments are JSON but not what the row accepts (not an object, or failing validation)."""


@dataclass(frozen=True, slots=True)
class InvalidCall:
    """The ``problem`` an ``on_invalid_tool_call`` hook is shown."""

    kind: InvalidCallKind
    """What is wrong."""
    error: ToolExecutionError
    """The error the call fails with unless a hook repairs or skips it."""
    entry: Entry | None = None
    """The row the name resolved to (None for ``unknown_name``)."""
    suggestions: tuple[str, ...] = ()
    """Close names of the snapshot, for ``unknown_name``."""

    @property
    def message(self) -> str:
        """What is wrong, in words the model can act on."""
        return self.error.message


# -- hooks ------------------------------------------------------------------------


class Hook:
    """Base class of hooks: override any of the event methods (the defaults have no opinion).

    One hook object may serve many turns at once; keep per-call state keyed by ``call.id``.
    """

    __slots__ = ()

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        """Decide about a valid call before its tool runs."""
        return PROCEED

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        """Decide about a call's result (every disposition) before the model is shown it."""
        return KEEP

    async def on_invalid_tool_call(
        self, call: ToolCall, problem: InvalidCall, ctx: ToolContext[Any]
    ) -> InvalidToolCallAction:
        """Decide about a call with an unknown name or invalid arguments."""
        return DEFER

    def around_tool_call(
        self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]
    ) -> AbstractAsyncContextManager[object] | None:
        """An async context manager held while the tool runs (None: nothing to hold)."""
        return None
