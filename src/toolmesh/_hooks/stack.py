"""Hook stacks: hooks chained in order, each answer checked against its event.

A rewrite feeds the next hook; the first terminal action ends the chain. A hook that
raises, or answers with an action its event does not accept, is a ``HookError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ConfigurationError, HookError, ToolExecutionError, hook_label
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import ToolResult
from toolmesh._rows.rows import Entry

from .actions import (
    CALL_ACTIONS,
    FAIL,
    INVALID_ACTIONS,
    RESULT_ACTIONS,
    Defer,
    Fail,
    Hook,
    InvalidCall,
    Proceed,
    Refuse,
    Repair,
    RewriteArguments,
    RewritePresentation,
    SkipWith,
    StopTurn,
)

__all__ = [
    "CallDecision",
    "HookStack",
    "InvalidDecision",
    "ResultDecision",
    "arguments_json",
    "as_output",
]

A = TypeVar("A")


_EVENTS = ("on_tool_call", "on_tool_result", "on_invalid_tool_call", "around_tool_call")
_ACCEPTED = {
    "on_tool_call": CALL_ACTIONS,
    "on_tool_result": RESULT_ACTIONS,
    "on_invalid_tool_call": INVALID_ACTIONS,
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


def arguments_json(call: ToolCall, arguments: Mapping[str, Any] | str, hook: object, event: str) -> ToolCall:
    """``call`` with new arguments as canonical JSON text.

    Raises:
        HookError: when the arguments are not a JSON object.
    """
    fixed = ToolCall.from_arguments(call.id, call.name, arguments)
    if fixed.problem is not None:
        raise HookError(hook, event, f"gave arguments for {call.name!r} that cannot be used: {fixed.problem}")
    return replace(call, arguments=fixed.arguments, problem=None)


def as_output(output: ToolOutput | str) -> ToolOutput:
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
                call = arguments_json(call, action.arguments, hook, "on_tool_call")
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
                result = replace(result, presentation=as_output(action.output))
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
            ToolExecutionError: a hook's own reason not to run the call (the call fails with it).
            HookError: when a hook's context could not be entered otherwise.
        """
        async with AsyncExitStack() as stack:
            for hook, method in self._around:
                try:
                    manager = method(call, entry, ctx)
                    if manager is not None:
                        await stack.enter_async_context(manager)
                except ToolExecutionError:
                    raise  # the hook's own verdict on this call (a slot that cannot be had just now)
                except Exception as exc:
                    raise HookError(hook, "around_tool_call", f"raised {type(exc).__name__}: {exc}") from exc
            yield
