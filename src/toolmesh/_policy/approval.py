"""Approval: ask the host before a call runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry

__all__ = ["ApprovalCallback", "RequireApproval"]

ApprovalCallback = Callable[[ToolCall, Entry], Awaitable["bool | str"]]
"""``await approve(call, entry)``: True runs the call; False or a reason (str) refuses it."""


class RequireApproval(Hook):
    """Ask ``await callback(call, entry)`` before a call runs: True runs it; False or a reason refuses it.

    ``when(entry)`` narrows which rows need approval (all by default). Put approval
    after cheaper rules, so nobody is asked about a call a rule would refuse.

    Without a callback, someone else asks: a framework bridge (``toolmesh.bridges.*``)
    turns the hook into the framework's own approval, which pauses the run before the
    call. Where nobody can ask (``run_tool_calls``, the gateway), a call that needs
    approval is refused.
    """

    __slots__ = ("callback", "when")

    def __init__(
        self, callback: ApprovalCallback | None = None, *, when: Callable[[Entry], bool] | None = None
    ) -> None:
        self.callback = callback
        """Decides each call (None: the framework a bridge exports to asks, or the call is refused)."""
        self.when = when
        """Which rows need approval (None: every row)."""

    def covers(self, entry: Entry) -> bool:
        """Whether calls of ``entry`` need approval."""
        return self.when is None or self.when(entry)

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self.covers(entry):
            return PROCEED
        if self.callback is None:
            return Refuse(f"Running the tool {call.name!r} needs approval, and nobody can give it here.")
        verdict = await self.callback(call, entry)
        if verdict is True:
            return PROCEED
        if verdict is False:
            return Refuse(f"Running the tool {call.name!r} was not approved.")
        if isinstance(verdict, str):
            return Refuse(verdict)
        raise TypeError(f"the approval callback returned {type(verdict).__name__}; it must return a bool or a str")
