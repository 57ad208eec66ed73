"""One framework call run as a toolmesh turn: the hooks as one stack, the call, a framework's pause.

Nothing here imports a framework.

- ``hook_stack(hooks)``: the hooks as one stack, checked when the bridge is built;
- ``run_call(snapshot, call, hooks, ctx)``: one call through toolmesh's own turn, so
  hooks, policy, limits, tracing and redaction apply as in ``run_tool_calls``;
- ``Suspension``: how a framework's own pause (an approval its user must give) crosses
  that turn unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack

__all__ = ["Suspension", "hook_stack", "run_call"]


def hook_stack(hooks: Iterable[Hook | HookStack]) -> HookStack:
    """The hooks as one stack, checked once when the bridge is built.

    Raises:
        ConfigurationError: for an object that is not a hook.
    """
    return hooks if isinstance(hooks, HookStack) else HookStack(hooks)


class Suspension(BaseException):
    """A framework's own pause signal, carried through a toolmesh turn untouched.

    A turn turns every ``Exception`` a hook raises into a failed call. A framework
    that pauses a call to ask its user (LangGraph's ``interrupt``, for instance) raises
    an exception of its own and runs the call again once answered; a hook that asks
    through such a framework wraps that exception in a ``Suspension``. Being a
    ``BaseException``, as ``GeneratorExit`` is, it passes every ``except Exception``
    of the turn, so the call is neither failed nor finished, and no result hook sees
    it; ``run_call`` raises the framework's exception again.
    """

    def __init__(self, signal: BaseException) -> None:
        super().__init__(signal)
        self.signal = signal
        """The framework's own exception, raised again by ``run_call``."""


async def run_call(snapshot: ToolSnapshot, call: ToolCall, hooks: HookStack, ctx: ToolContext[Any]) -> ToolResult:
    """Run one call as a turn of one call: through ``hooks``, against the row ``snapshot`` holds.

    Never raises for anything the call does wrong (it returns the failed result);
    a ``Suspension`` raised by a hook re-raises the framework's own signal.
    """
    try:
        [result] = await run_tool_calls(snapshot, (call,), hooks=hooks, ctx_factory=lambda _: ctx)
    except Suspension as suspension:
        raise suspension.signal from None
    return result
