"""What the LangChain bridge builds on: one snapshot, rows checked at export, one call run as a turn.

Nothing here imports a framework. A bridge module builds its framework's tool shape
on these:

- ``frozen(source)``: the snapshot a bridge dispatches against;
- ``exported_rows(snapshot, framework, left_out=..., caveats=..., strict=...)``: the
  rows that cross, each row that does not cross as it is named with its reason (a
  warning, or ``UnsupportedToolError`` under ``strict``); ``hosted_reason``,
  ``streaming_reason`` and ``task_reason`` are reasons the bridges share;
- ``run_call(snapshot, call, hooks, ctx)``: one call through toolmesh's own turn, so
  hooks, policy, limits, tracing and redaction apply as in ``run_tool_calls``;
- ``Suspension``: how a framework's own pause (an approval its user must give) crosses
  that turn unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.capabilities import IoMode, TaskSupport
from toolmesh._core.errors import UnsupportedToolError
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry, HostedEntry

__all__ = [
    "Suspension",
    "exported_rows",
    "frozen",
    "hook_stack",
    "hosted_reason",
    "logger",
    "run_call",
    "streaming_reason",
    "task_reason",
]

logger = logging.getLogger("toolmesh.bridges")
"""Where a bridge says which rows it left out, and why."""

RowReason = Callable[[Entry], str | None]
"""Why a framework cannot carry a row (None: it can)."""


def frozen(source: ToolRegistry | ToolSnapshot) -> ToolSnapshot:
    """The snapshot a bridge dispatches against: ``source`` itself, or a registry's rows now.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(source, ToolSnapshot):
        return source
    if isinstance(source, ToolRegistry):
        return source.snapshot()
    raise TypeError(f"a bridge takes a ToolRegistry or a ToolSnapshot; got {type(source).__name__}")


def hook_stack(hooks: Iterable[Hook | HookStack]) -> HookStack:
    """The hooks as one stack, checked once when the bridge is built.

    Raises:
        ConfigurationError: for an object that is not a hook.
    """
    return hooks if isinstance(hooks, HookStack) else HookStack(hooks)


def hosted_reason(row: Entry) -> str | None:
    """A hosted row runs at a model provider, not here: no local tool can stand for it."""
    if isinstance(row, HostedEntry):
        owner = f"provider {row.provider!r}" if row.provider else "the model provider"
        return f"it is a hosted tool, run by {owner}, not by toolmesh"
    return None


def streaming_reason(row: Entry, framework: str) -> str | None:
    """A streaming row's partial outputs have nowhere to go in a framework without streaming tools."""
    if row.capabilities.io_mode is IoMode.STREAMING:
        return (
            f"it streams partial outputs and a {framework} tool returns once: the model gets the whole "
            "output when the stream ends (give each call's ToolContext an on_partial callback to see the parts)"
        )
    return None


def task_reason(row: Entry, framework: str) -> str | None:
    """A task-only MCP row runs as an MCP task, which a framework without tasks cannot poll or cancel."""
    if row.capabilities.task_support is TaskSupport.REQUIRED:
        return (
            f"it runs only as an MCP task and {framework} has no tasks: each call waits for the task's "
            "result, bounded by the server's call timeout"
        )
    return None


def exported_rows(
    snapshot: ToolSnapshot,
    framework: str,
    *,
    left_out: Sequence[RowReason] = (),
    caveats: Sequence[RowReason] = (),
    strict: bool,
) -> list[Entry]:
    """The rows of ``snapshot`` that cross into ``framework``, in catalog order, each exception said.

    A row a ``left_out`` reason names cannot be represented: it is left out. A row a
    ``caveats`` reason names crosses, but not as it is (no streaming, no tasks, ...).
    Either is a warning on the ``toolmesh.bridges`` logger naming the row and the
    reason; with ``strict``, any of them fails the whole export instead.

    Raises:
        UnsupportedToolError: under ``strict``, naming every row that does not cross as it is.
    """
    kept: list[Entry] = []
    dropped: list[str] = []
    noted: list[str] = []
    for row in snapshot:
        why = next((reason for check in left_out if (reason := check(row)) is not None), None)
        if why is not None:
            dropped.append(f"{row.name!r}: {why}")
            continue
        kept.append(row)
        noted.extend(f"{row.name!r}: {reason}" for check in caveats if (reason := check(row)) is not None)
    if strict and (dropped or noted):
        raise UnsupportedToolError(
            f"{len(dropped) + len(noted)} row(s) cannot be exported to {framework} as they are: "
            + "; ".join(dropped + noted)
            + ". Leave them out with registry.snapshot(active=[...]), or build the bridge with strict=False "
            "to have them left out or carried as said, with a warning"
        )
    for line in dropped:
        logger.warning("%s: row %s; it is left out", framework, line)
    for line in noted:
        logger.warning("%s: row %s", framework, line)
    return kept


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
