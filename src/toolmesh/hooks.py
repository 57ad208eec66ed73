"""Hooks: typed decisions about a turn's tool calls, and stacks that chain them.

A hook is a ``Hook`` subclass that overrides any of three event methods, each with
its own action types (so an action that makes no sense for an event is a type
error, and a run-time ``HookError`` naming the hook):

=========================  ==========================================  =====================
event                      actions                                     terminal
=========================  ==========================================  =====================
``on_tool_call``           ``Proceed``, ``RewriteArguments``,          ``SkipWith``,
                           ``SkipWith``, ``Refuse``, ``StopTurn``      ``Refuse``, ``StopTurn``
``on_tool_result``         ``Keep``, ``RewritePresentation``,          ``StopTurn``
                           ``StopTurn``
``on_invalid_tool_call``   ``Defer``, ``Fail``, ``Repair``,            ``Fail``, ``Repair``,
                           ``SkipWith``                                ``SkipWith``
=========================  ==========================================  =====================

Hooks run in order; a rewrite feeds the next hook; the first terminal action ends
the chain. A fourth, optional method, ``around_tool_call``, returns an async context
manager held while the tool runs (``ConcurrencyLimit`` uses it to hold a slot).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeAlias, TypeVar

from ._calls import ToolCall
from ._context import ToolContext
from ._entries import Entry
from ._errors import ConfigurationError, ErrorKind, HookError, ToolExecutionError, hook_label
from ._output import ToolOutput
from ._result import ToolResult

__all__ = [
    "CallDecision",
    "Defer",
    "Fail",
    "Hook",
    "HookError",
    "HookStack",
    "InvalidCall",
    "InvalidCallKind",
    "InvalidDecision",
    "InvalidToolCallAction",
    "Keep",
    "Proceed",
    "Refuse",
    "Repair",
    "ResultDecision",
    "RewriteArguments",
    "RewritePresentation",
    "SkipWith",
    "StopTurn",
    "ToolCallAction",
    "ToolResultAction",
]

A = TypeVar("A")


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

_CALL_ACTIONS = (Proceed, RewriteArguments, SkipWith, Refuse, StopTurn)
_RESULT_ACTIONS = (Keep, RewritePresentation, StopTurn)
_INVALID_ACTIONS = (Defer, Fail, Repair, SkipWith)

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


_EVENTS = ("on_tool_call", "on_tool_result", "on_invalid_tool_call", "around_tool_call")
_ACCEPTED = {
    "on_tool_call": _CALL_ACTIONS,
    "on_tool_result": _RESULT_ACTIONS,
    "on_invalid_tool_call": _INVALID_ACTIONS,
}


def _implementation(hook: object, event: str) -> Callable[..., Any] | None:
    impl = getattr(type(hook), event, None)
    if impl is None or impl is getattr(Hook, event):
        return None
    method: Callable[..., Any] = getattr(hook, event)
    return method


def _wrong_action(hook: object, event: str, action: object) -> HookError:
    accepted = ", ".join(t.__name__ for t in _ACCEPTED[event])
    got = "None (a missing return?)" if action is None else type(action).__name__
    belongs = [e for e, types in _ACCEPTED.items() if e != event and isinstance(action, types)]
    hint = f"; {got} is an action of {' and '.join(belongs)}" if belongs else ""
    return HookError(hook, event, f"returned {got}; {event} must return one of {accepted}{hint}")


async def _ask(hook: object, event: str, method: Callable[..., Awaitable[A]], *args: Any) -> A:
    try:
        action = await method(*args)
    except Exception as exc:
        raise HookError(hook, event, f"raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(action, _ACCEPTED[event]):
        raise _wrong_action(hook, event, action)
    return action


def _arguments_json(call: ToolCall, arguments: Mapping[str, Any] | str, hook: object, event: str) -> ToolCall:
    """``call`` with new arguments as canonical JSON text.

    Raises:
        HookError: when the arguments are not a JSON object.
    """
    fixed = ToolCall.from_arguments(call.id, call.name, arguments)
    if fixed.problem is not None:
        raise HookError(hook, event, f"gave arguments for {call.name!r} that cannot be used: {fixed.problem}")
    return replace(call, arguments=fixed.arguments, problem=None)


def _as_output(output: ToolOutput | str) -> ToolOutput:
    """A presentation from what an action carries."""
    return ToolOutput.text(output) if isinstance(output, str) else output


@dataclass(frozen=True, slots=True)
class CallDecision:
    """What a stack's ``on_tool_call`` chain decided."""

    call: ToolCall
    """The call after every rewrite."""
    action: SkipWith | Refuse | StopTurn | None
    """The terminal action, or None: run the call."""
    hook: Hook | None = None
    """The hook that returned the terminal action."""


@dataclass(frozen=True, slots=True)
class ResultDecision:
    """What a stack's ``on_tool_result`` chain decided."""

    result: ToolResult
    """The result after every presentation rewrite (raw output and metadata as recorded)."""
    stop: StopTurn | None = None
    """Set when a hook stopped the turn."""
    hook: Hook | None = None
    """The hook that stopped the turn."""


@dataclass(frozen=True, slots=True)
class InvalidDecision:
    """What a stack's ``on_invalid_tool_call`` chain decided."""

    action: Fail | Repair | SkipWith
    """The terminal action (``Fail()`` when every hook deferred)."""
    hook: Hook | None = None
    """The hook that decided (None when every hook deferred)."""


class HookStack:
    """Hooks in order, with the chain rule applied: rewrites feed the next hook, the first terminal action wins.

    ``run_tool_calls`` builds one from its ``hooks``; a host's own loop (or a gateway)
    can use a stack directly. Nested stacks are flattened.

    Raises:
        ConfigurationError: for an object that implements no hook method (a class
            instead of an instance, for instance).
    """

    __slots__ = ("_around", "_calls", "_invalid", "_results", "hooks")

    def __init__(self, hooks: Iterable[Hook | HookStack] = ()) -> None:
        flat: list[Hook] = []
        for hook in hooks:
            if isinstance(hook, HookStack):
                flat.extend(hook.hooks)
            else:
                flat.append(hook)
        self.hooks: tuple[Hook, ...] = tuple(flat)
        """The hooks, in the order they run."""
        found: dict[str, list[tuple[Hook, Callable[..., Any]]]] = {event: [] for event in _EVENTS}
        for hook in self.hooks:
            methods = [(event, _implementation(hook, event)) for event in _EVENTS]
            if not any(method for _, method in methods):
                raise ConfigurationError(
                    f"{hook!r} is not a hook: it implements none of {', '.join(_EVENTS)}; "
                    "pass an instance of a Hook subclass that overrides at least one"
                )
            for event, method in methods:
                if method is not None:
                    found[event].append((hook, method))
        self._calls = tuple(found["on_tool_call"])
        self._results = tuple(found["on_tool_result"])
        self._invalid = tuple(found["on_invalid_tool_call"])
        self._around = tuple(found["around_tool_call"])

    def __len__(self) -> int:
        return len(self.hooks)

    def __iter__(self) -> Iterator[Hook]:
        return iter(self.hooks)

    def __repr__(self) -> str:
        return f"HookStack([{', '.join(hook_label(hook) for hook in self.hooks)}])"

    @property
    def handles_calls(self) -> bool:
        """Whether any hook implements ``on_tool_call``."""
        return bool(self._calls)

    @property
    def handles_results(self) -> bool:
        """Whether any hook implements ``on_tool_result``."""
        return bool(self._results)

    @property
    def handles_invalid(self) -> bool:
        """Whether any hook implements ``on_invalid_tool_call``."""
        return bool(self._invalid)

    @property
    def holds_calls(self) -> bool:
        """Whether any hook implements ``around_tool_call``."""
        return bool(self._around)

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> CallDecision:
        """Run the ``on_tool_call`` chain.

        Raises:
            HookError: when a hook raised or returned a wrong action.
        """
        for hook, method in self._calls:
            action = await _ask(hook, "on_tool_call", method, call, entry, ctx)
            if isinstance(action, RewriteArguments):
                call = _arguments_json(call, action.arguments, hook, "on_tool_call")
            elif not isinstance(action, Proceed):
                return CallDecision(call, action, hook)
        return CallDecision(call, None)

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ResultDecision:
        """Run the ``on_tool_result`` chain.

        Raises:
            HookError: when a hook raised or returned a wrong action.
        """
        for hook, method in self._results:
            action = await _ask(hook, "on_tool_result", method, call, result, ctx)
            if isinstance(action, RewritePresentation):
                result = replace(result, presentation=_as_output(action.output))
            elif isinstance(action, StopTurn):
                return ResultDecision(result, action, hook)
        return ResultDecision(result)

    async def on_invalid_tool_call(
        self, call: ToolCall, problem: InvalidCall, ctx: ToolContext[Any]
    ) -> InvalidDecision:
        """Run the ``on_invalid_tool_call`` chain.

        Raises:
            HookError: when a hook raised or returned a wrong action.
        """
        for hook, method in self._invalid:
            action = await _ask(hook, "on_invalid_tool_call", method, call, problem, ctx)
            if not isinstance(action, Defer):
                return InvalidDecision(action, hook)
        return InvalidDecision(FAIL)

    @asynccontextmanager
    async def around_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> AsyncIterator[None]:
        """Hold every hook's ``around_tool_call`` context (in order) while the tool runs.

        Raises:
            HookError: when a hook's context could not be entered.
        """
        async with AsyncExitStack() as stack:
            for hook, method in self._around:
                try:
                    manager = method(call, entry, ctx)
                    if manager is not None:
                        await stack.enter_async_context(manager)
                except Exception as exc:
                    raise HookError(hook, "around_tool_call", f"raised {type(exc).__name__}: {exc}") from exc
            yield
