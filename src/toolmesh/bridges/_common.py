"""What every framework bridge needs: the turn's snapshot, what cannot cross, approval from policy.

Nothing here imports a framework. Running one call as a turn is ``bridges._turns``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from toolmesh._core.capabilities import IoMode, TaskSupport
from toolmesh._core.errors import UnsupportedToolError
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._policy.approval import RequireApproval
from toolmesh._policy.rules import RowRule
from toolmesh._rows.rows import Entry, HostedEntry, describe_row

__all__ = ["ApprovalPlan", "Crossing", "approval_plan", "crossing", "rows_that_cross", "snapshot_of"]

logger = logging.getLogger("toolmesh.bridges")

_WARNED_LIMIT = 4096
_warned: set[tuple[str, str]] = set()
"""(framework, warning) pairs already logged."""


def snapshot_of(source: ToolRegistry | ToolSnapshot) -> ToolSnapshot:
    """The rows a bridge exports and runs: a registry's snapshot taken now, or the snapshot given.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(source, ToolRegistry):
        return source.snapshot()
    if isinstance(source, ToolSnapshot):
        return source
    raise TypeError(f"a bridge takes a ToolRegistry or a ToolSnapshot, got {type(source).__name__}")


@dataclass(frozen=True, slots=True)
class Crossing:
    """Why a row does not cross into a framework whole."""

    reason: str
    """What the framework cannot carry, and what to do about it."""
    kept: bool
    """True: the row is exported and only what ``reason`` says is lost; False: it is left out."""


def crossing(row: Entry, framework: str) -> Crossing | None:
    """What every framework without these notions loses of ``row`` (None: nothing)."""
    if isinstance(row, HostedEntry):
        return Crossing(
            f"it is a provider-executed (hosted) tool, which {framework} cannot run as one of its tools; "
            "give the agent the framework's own hosted tool instead, or leave the row out with "
            "registry.snapshot(active=[...])",
            kept=False,
        )
    if row.capabilities.io_mode is IoMode.STREAMING:
        return Crossing(
            f"it streams partial outputs, which {framework} has no notion of: the model is shown the "
            "final output only (a ctx_factory that sets on_partial still receives the parts)",
            kept=True,
        )
    if row.capabilities.task_support is TaskSupport.REQUIRED:
        return Crossing(
            f"it runs only as an MCP task, which {framework} has no notion of: the call waits for the "
            "task's end and the task's statuses reach only a ctx_factory that sets progress",
            kept=True,
        )
    return None


def rows_that_cross(
    rows: Iterable[Entry],
    problems: Callable[[Entry], Crossing | None],
    *,
    framework: str,
    strict: bool,
) -> list[Entry]:
    """The rows to export, in order, having said what does not cross.

    A row ``problems`` finds fault with is left out (or kept, as the ``Crossing`` says)
    with a warning on the ``toolmesh.bridges`` logger naming the row and the reason (once
    per process for the same row and reason).

    Raises:
        UnsupportedToolError: with ``strict``, naming every row ``problems`` finds fault with.
    """
    kept: list[Entry] = []
    refused: list[str] = []
    for row in rows:
        problem = problems(row)
        if problem is None:
            kept.append(row)
            continue
        what = f"{describe_row(row)} cannot cross into {framework} whole: {problem.reason}"
        if strict:
            refused.append(what)
            continue
        if (framework, what) not in _warned:  # tools built per run warn once per process, not per run
            if len(_warned) >= _WARNED_LIMIT:
                _warned.clear()
            _warned.add((framework, what))
            logger.warning("%s. %s", what, "It is exported anyway." if problem.kept else "It is left out.")
        if problem.kept:
            kept.append(row)
    if refused:
        it = "it" if len(refused) == 1 else "them"
        raise UnsupportedToolError(
            f"{'; '.join(refused)} (strict=True refuses {it}; pass strict=False to be warned instead)"
        )
    return kept


@dataclass(frozen=True, slots=True)
class ApprovalPlan:
    """Which rows a framework's own approval asks about, and the hooks a call runs after it."""

    approvals: tuple[RequireApproval, ...]
    """The ``RequireApproval`` hooks without a callback, which the framework's own approval carries."""
    hooks: HookStack
    """Every other hook, in order: what an approved (or not asked) call goes through."""
    _before: tuple[tuple[Hook, ...], ...]
    """For each approval hook, the hooks that run before it."""

    def needs_approval(self, row: Entry) -> bool:
        """Whether a call of ``row`` must be approved first.

        A row an approval hook covers needs approval, unless a rule about rows alone
        placed before that hook refuses it anyway: nobody is asked about a call a rule
        would refuse.
        """
        for approval, before in zip(self.approvals, self._before, strict=True):
            if approval.covers(row) and not any(
                isinstance(hook, RowRule) and hook.refusal(row) is not None for hook in before
            ):
                return True
        return False


def approval_plan(hooks: Iterable[Hook | HookStack]) -> ApprovalPlan:
    """Split ``hooks`` into the approval the framework carries and the hooks that run in the call.

    A ``RequireApproval`` without a callback is the framework's to ask; one with a
    callback stays a hook, and its callback decides inside the call.

    Raises:
        ConfigurationError: for an object that is not a hook.
    """
    flat = HookStack(hooks).hooks
    approvals: list[RequireApproval] = []
    before: list[tuple[Hook, ...]] = []
    others: list[Hook] = []
    for hook in flat:
        if isinstance(hook, RequireApproval) and hook.callback is None:
            approvals.append(hook)
            before.append(tuple(others))
        else:
            others.append(hook)
    return ApprovalPlan(tuple(approvals), HookStack(others), tuple(before))
