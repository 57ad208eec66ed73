"""Ready-made hooks: allow/deny rules, approval, concurrency and rate limits, sizes, pinning.

Every refusal has disposition ``refused`` and a reason the model is shown (error
kind ``refused``; ``rate_limited`` for ``RateLimit``, which is retryable). Name and
server patterns are ``fnmatch`` patterns, matched case-sensitively (``"fs__*"``).

One policy object may serve many turns at once: limits and pins are shared by
every turn the object is passed to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._policy.limits import ArgumentSizeLimit, ConcurrencyLimit, RateLimit
from toolmesh._policy.pinning import DefinitionPinning, definition_digest
from toolmesh._policy.rules import AllowServers, AllowTools, DenyAnnotated, DenyServers, DenyTools, DenyWhere
from toolmesh._rows.rows import Entry

__all__ = [
    "AllowServers",
    "AllowTools",
    "ApprovalCallback",
    "ArgumentSizeLimit",
    "ConcurrencyLimit",
    "DefinitionPinning",
    "DenyAnnotated",
    "DenyServers",
    "DenyTools",
    "DenyWhere",
    "RateLimit",
    "RequireApproval",
    "definition_digest",
]

ApprovalCallback = Callable[[ToolCall, Entry], Awaitable["bool | str"]]
"""``await approve(call, entry)``: True runs the call; False or a reason (str) refuses it."""


class RequireApproval(Hook):
    """Ask ``await callback(call, entry)`` before a call runs: True runs it; False or a reason refuses it.

    ``when(entry)`` narrows which rows need approval (all by default). Put approval
    after cheaper rules, so nobody is asked about a call a rule would refuse.
    """

    __slots__ = ("callback", "when")

    def __init__(self, callback: ApprovalCallback, *, when: Callable[[Entry], bool] | None = None) -> None:
        self.callback = callback
        """Decides each call."""
        self.when = when
        """Which rows need approval (None: every row)."""

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if self.when is not None and not self.when(entry):
            return PROCEED
        verdict = await self.callback(call, entry)
        if verdict is True:
            return PROCEED
        if verdict is False:
            return Refuse(f"Running the tool {call.name!r} was not approved.")
        if isinstance(verdict, str):
            return Refuse(verdict)
        raise TypeError(f"the approval callback returned {type(verdict).__name__}; it must return a bool or a str")
