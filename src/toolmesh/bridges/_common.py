"""What the framework bridges share: approval by the framework's user, retry or fail, saying what cannot cross.

Nothing here imports a framework.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind, UnsupportedToolError
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._hooks.actions import PROCEED, Hook, SkipWith, ToolCallAction
from toolmesh._hooks.stack import HookStack
from toolmesh._policy.approval import RequireApproval
from toolmesh._policy.rules import RowRule
from toolmesh._rows.rows import Entry

__all__ = [
    "APPROVAL_PENDING",
    "FrameworkApproval",
    "asks_retry",
    "is_pending",
    "needs_approval",
    "plain_json",
    "report_rows",
    "with_framework_approval",
]

APPROVAL_PENDING = "toolmesh.approval_pending"
"""``ToolResult.metadata`` key (value True) of a call put on hold until the framework's user approves it."""


def needs_approval(hooks: Iterable[Hook], row: Entry) -> bool:
    """Whether calls of ``row`` wait for approval, as far as the row alone tells.

    The hooks are read in order, like a turn runs them: a rule about rows alone that
    refuses ``row`` comes first (nobody is asked about a call a rule refuses), else the
    first ``RequireApproval`` that covers the row asks.
    """
    for hook in hooks:
        if isinstance(hook, RowRule) and hook.refusal(row) is not None:
            return False
        if isinstance(hook, RequireApproval) and hook.covers(row):
            return True
    return False


class FrameworkApproval(Hook):
    """A ``RequireApproval`` whose decision the framework's user makes instead of its callback.

    ``approved()`` says whether the framework approved the call now running. A covered
    call that was not approved is answered with a ``skipped`` result marked
    ``APPROVAL_PENDING``, which the bridge turns into the framework's approval request.
    """

    __slots__ = ("approved", "policy")

    def __init__(self, policy: RequireApproval, approved: Callable[[], bool]) -> None:
        self.policy = policy
        """The hook this one stands in for (its ``when`` says which rows need approval)."""
        self.approved = approved
        """Whether the framework's user approved the running call."""

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self.policy.covers(entry) or self.approved():
            return PROCEED
        shown = ToolOutput.text(f"The call of {call.name!r} waits for the user's approval.")
        pending = ToolResult(
            call.id, call.name, entry.kind, Disposition.SKIPPED, ToolOutput(), shown, metadata={APPROVAL_PENDING: True}
        )
        return SkipWith(result=pending)

    def __repr__(self) -> str:
        return f"FrameworkApproval({self.policy!r})"


def with_framework_approval(hooks: Iterable[Hook | HookStack], approved: Callable[[], bool]) -> HookStack:
    """The hooks in order, every ``RequireApproval`` replaced by a ``FrameworkApproval`` asking ``approved``.

    Raises:
        ConfigurationError: for an object that is not a hook.
    """
    flat = HookStack(hooks).hooks
    return HookStack(FrameworkApproval(h, approved) if isinstance(h, RequireApproval) else h for h in flat)


def is_pending(result: ToolResult) -> bool:
    """Whether ``result`` puts its call on hold until the framework's user approves it."""
    return result.disposition is Disposition.SKIPPED and result.metadata.get(APPROVAL_PENDING) is True


def asks_retry(result: ToolResult) -> bool:
    """Whether a failed or refused call should go back to the model to try again.

    Invalid arguments (the model can correct them) and retryable errors (a timeout, an
    unavailable server, a rate limit) do; other failures are final for this call.
    """
    error = result.error
    return error is not None and (error.kind is ErrorKind.INVALID_ARGUMENTS or error.retryable)


def report_rows(problems: Mapping[str, str], *, framework: str, strict: bool, warned: set[str]) -> None:
    """Say which rows cannot cross into ``framework``, and why: an error when ``strict``, else one warning each.

    ``warned`` holds the names already warned about (a bridge lists its catalog again at
    every run step, and says each thing once); it is updated.

    Raises:
        UnsupportedToolError: when ``strict`` and any row cannot cross (naming every one).
    """
    if not problems:
        return
    if strict:
        listed = "; ".join(f"{name!r}: {why}" for name, why in problems.items())
        raise UnsupportedToolError(
            f"{len(problems)} row(s) cannot be used in {framework}: {listed}. Leave them out of the catalog "
            "(registry.snapshot(active=[...])) or pass strict=False to leave them out with a warning"
        )
    for name, why in problems.items():
        if name not in warned:
            warned.add(name)
            warnings.warn(f"The row {name!r} is left out of the {framework} tools: {why}", UserWarning, stacklevel=3)


def plain_json(value: Any) -> Any:
    """A deep copy of JSON-like data as plain dicts and lists, for a framework that may change what it is given."""
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(item) for item in value]
    return value
