"""A toolmesh catalog as LangChain tools, for LangGraph's ``ToolNode``, ``create_react_agent`` and ``bind_tools``.

``pip install 'toolmesh[langchain]'``. ``tools(registry_or_snapshot, hooks=[...])`` returns
one ``BaseTool`` per row. Each call runs through toolmesh's own turn (``run_tool_calls``
with one call), so hooks, policy, limits, tracing and redaction apply as they do there:

- the row's JSON Schema is the tool's ``args_schema`` as it is (no pydantic round trip);
  toolmesh validates the arguments;
- the result's presentation is the ``ToolMessage`` content (text, or standard content
  blocks when there are images, audio or files), and a ``ResultArtifact`` is its
  ``artifact`` (``response_format="content_and_artifact"``): a dict a checkpointer
  stores, holding the raw ``ToolResult`` while in memory;
- a failed or refused call is a ``ToolMessage`` with ``status="error"`` and toolmesh's
  model feedback as content;
- ``RequireApproval(interrupt_for_approval)`` asks for approval through LangGraph's
  ``interrupt``: the run pauses, and ``Command(resume=True | False | "reason")`` answers
  the same call.

The tools are made from one snapshot: what the model was bound to is what runs. Call
``tools()`` again for a catalog that changed. They run on the event loop (``ainvoke``,
``astream``); a synchronous ``invoke`` is refused.

This module overrides one private method of LangChain's ``BaseTool``,
``_to_args_and_kwargs``: the only place a tool sees its call's id, which toolmesh needs
for the ``ToolContext``, the result and the approval. It is the one fragile spot.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from typing import Any, Literal, get_type_hints

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import BaseTool, ToolException
from pydantic import PrivateAttr

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.calls import ToolCall
from toolmesh._core.output import Audio, EmbeddedResource, Image, ToolOutput, block_text
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry

from ._common import Crossing, crossing, rows_that_cross, snapshot_of
from ._langchain_schema import args_schema, schema_caveat, schema_left_out
from ._turns import Suspension, hook_stack, run_call

__all__ = [
    "ContextFactory",
    "ResultArtifact",
    "ToolmeshTool",
    "interrupt_for_approval",
    "tools",
]

_FRAMEWORK = "LangChain"

ContextFactory = Callable[[ToolCall, RunnableConfig], ToolContext[Any]]
"""Builds one call's ``ToolContext`` from the call and the tool's ``RunnableConfig`` (its
``call_id`` is set to the call's id)."""

_CALL = "toolmesh_call"
"""The one keyword ``_arun`` receives: the call's id and the model's arguments, untouched."""


def tools(
    source: ToolRegistry | ToolSnapshot,
    *,
    hooks: Iterable[Hook | HookStack] = (),
    ctx_factory: ContextFactory | None = None,
    strict: bool = False,
) -> list[ToolmeshTool]:
    """The catalog's rows as LangChain tools, in catalog order, all from one snapshot.

    Args:
        source: A registry (snapshotted now) or a snapshot.
        hooks: toolmesh hooks and policy, run for every call as in ``run_tool_calls``.
        ctx_factory: Builds each call's ``ToolContext`` from the call and the tool's
            ``RunnableConfig``. By default the context's ``deps`` is the LangGraph run's
            ``context`` (``graph.ainvoke(..., context=...)``), or None outside a graph.
        strict: Fail instead of warning when a row does not cross as it is.

    Rows that do not cross as they are: a hosted row (run by a model provider, so no
    local tool can stand for it) and a row whose schema LangChain's ``bind_tools``
    cannot read (a ``$ref`` outside the schema, or one that does not resolve) are left
    out; a streaming row (its partial outputs have no LangChain channel: the model gets
    the whole output), a task-only MCP row (LangChain has no tasks: the call waits for
    the task's result) and a row whose schema refers to itself (``bind_tools`` cuts the
    cycle, so the model sees a looser schema) cross. Each is a warning on the
    ``toolmesh.bridges`` logger naming the row and the reason (once per process for
    the same row and reason).

    Raises:
        UnsupportedToolError: with ``strict``, naming every row that does not cross as it is.
        ConfigurationError: for an object in ``hooks`` that is not a hook.
        TypeError: for a ``source`` that is neither a registry nor a snapshot.
    """
    snapshot = snapshot_of(source)
    stack = hook_stack(hooks)
    rows = rows_that_cross(snapshot.entries(), _problem, framework=_FRAMEWORK, strict=strict)
    return [ToolmeshTool.of(row, snapshot, stack, ctx_factory) for row in rows]


def _problem(row: Entry) -> Crossing | None:
    """What LangChain cannot carry of ``row``: what no framework without these notions can
    (``crossing``), and what ``bind_tools`` cannot read or changes in its schema."""
    common = crossing(row, _FRAMEWORK)
    if common is not None and not common.kept:
        return common
    if (unreadable := schema_left_out(row)) is not None:
        return Crossing(unreadable, kept=False)
    caveats = [common.reason] if common is not None else []
    if (changed := schema_caveat(row)) is not None:
        caveats.append(changed)
    return Crossing("; ".join(caveats), kept=True) if caveats else None


class ResultArtifact(dict[str, Any]):
    """The ``artifact`` of a bridged tool's ``ToolMessage``: the call's result, for the host only.

    A dict, so that a LangGraph checkpointer stores it as it is: ``call_id``, ``name``,
    ``kind`` (``native``, ``mcp``, ``dynamic``), ``disposition`` (``succeeded``,
    ``failed``, ``refused``, ``skipped``), ``structured`` (the raw output's JSON value,
    an MCP result's ``structuredContent``; None when there is none), ``error_kind`` and
    ``retryable`` (None when the call succeeded) and ``duration`` (seconds). While the
    run is in memory, ``artifact.result`` is also the raw ``ToolResult`` (raw output,
    error, host-only metadata); a state read back from a checkpoint holds the dict only.
    """

    result: ToolResult | None
    """The raw ``ToolResult`` (in memory only: a checkpointer stores the dict)."""

    def __init__(self, result: ToolResult) -> None:
        error = result.error
        super().__init__(
            call_id=result.call_id,
            name=result.name,
            kind=result.kind,
            disposition=result.disposition.value,
            structured=result.output.structured,
            error_kind=None if error is None else error.kind.value,
            retryable=None if error is None else error.retryable,
            duration=result.duration,
        )
        self.result = result

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return bool(self["disposition"] == Disposition.SUCCEEDED)


class ToolmeshTool(BaseTool):
    """One toolmesh row as a LangChain tool; made by ``tools()``."""

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    """Always ``content_and_artifact``: the content for the model, a ``ResultArtifact`` for the host."""

    _row: Entry = PrivateAttr()
    _snapshot: ToolSnapshot = PrivateAttr()
    _hooks: HookStack = PrivateAttr()
    _ctx_factory: ContextFactory | None = PrivateAttr(default=None)

    @classmethod
    def of(
        cls, row: Entry, snapshot: ToolSnapshot, hooks: HookStack, ctx_factory: ContextFactory | None
    ) -> ToolmeshTool:
        """The tool of ``row``, dispatching against ``snapshot`` through ``hooks``."""
        definition = row.definition
        made = cls(
            name=row.name,
            description=definition.description or "",
            args_schema=args_schema(definition.parameters),
            # invoked without a tool call id, a failure answers its model feedback, as LangChain's
            # handle_tool_error does (False raises the ToolException, caused by the ToolExecutionError)
            handle_tool_error=True,
        )
        made._row = row
        made._snapshot = snapshot
        made._hooks = hooks
        made._ctx_factory = ctx_factory
        return made

    @property
    def row(self) -> Entry:
        """The row this tool runs (as the snapshot captured it)."""
        return self._row

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # the model's arguments go to toolmesh untouched (it validates them), with the call's id
        return (), {_CALL: (tool_call_id, tool_input)}

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"the toolmesh tool {self.name!r} runs on the event loop that owns its registry: "
            "call it with ainvoke (a graph with ainvoke or astream), not invoke"
        )

    async def _arun(self, *args: Any, **kwargs: Any) -> tuple[Any, ResultArtifact | None]:
        call_id, arguments = kwargs[_CALL]
        call = ToolCall.from_arguments(call_id or new_call_id(), self.name, arguments)
        result = await run_call(self._snapshot, call, self._hooks, self._context(call))
        content = _content(result.presentation)
        artifact = ResultArtifact(result)
        if result.disposition not in (Disposition.FAILED, Disposition.REFUSED):
            return content, artifact
        if call_id is None:  # LangChain's own failure path: handle_tool_error decides
            raise ToolException(result.presentation.as_text()) from result.error
        message = ToolMessage(content, artifact=artifact, tool_call_id=call_id, name=self.name, status="error")
        return message, None  # a ToolMessage as content is passed on as it is

    def _context(self, call: ToolCall) -> ToolContext[Any]:
        if self._ctx_factory is None:
            return ToolContext(call.id, _graph_context())
        ctx = self._ctx_factory(call, ensure_config())
        if ctx.call_id != call.id:
            ctx.call_id = call.id
        return ctx


# LangChain looks for a RunnableConfig parameter in _arun's type hints on every call;
# evaluated once here, they are read as they are instead of compiled from text each time
ToolmeshTool._arun.__annotations__ = get_type_hints(ToolmeshTool._arun)


def _content(output: ToolOutput) -> str | list[str | dict[str, Any]]:
    """``ToolMessage`` content for a presentation: its text, or standard content blocks in order.

    Text, JSON (compact JSON text), resource links and text resources are text; images,
    audio and binary resources are LangChain's standard ``image``, ``audio`` and ``file``
    blocks (base64), so nothing is flattened to a note.
    """
    if not any(_is_media(block) for block in output.blocks):
        return output.as_text()
    content: list[str | dict[str, Any]] = []
    for block in output.blocks:
        if isinstance(block, _MEDIA):
            content.append({"type": block.type, "base64": block.base64, "mime_type": block.mime_type})
        elif isinstance(block, EmbeddedResource) and block.blob is not None:
            data = base64.b64encode(block.blob).decode("ascii")
            content.append({"type": "file", "base64": data, "mime_type": block.mime_type or "application/octet-stream"})
        else:
            content.append({"type": "text", "text": block_text(block)})
    return content


_MEDIA = (Image, Audio)


def _is_media(block: object) -> bool:
    return isinstance(block, _MEDIA) or (isinstance(block, EmbeddedResource) and block.blob is not None)


def _graph_context() -> Any:
    """The running LangGraph graph's ``context`` (None outside a graph, or without langgraph)."""
    try:
        from langgraph.runtime import get_runtime

        runtime = get_runtime()
    except (ImportError, RuntimeError, KeyError):
        return None
    return getattr(runtime, "context", None)


async def interrupt_for_approval(call: ToolCall, entry: Entry) -> bool | str:
    """An approval callback for ``RequireApproval`` that asks through LangGraph's ``interrupt``.

    ``RequireApproval(interrupt_for_approval, when=...)`` in a bridge's hooks pauses the
    graph run at a call that needs approval; ``result["__interrupt__"]`` holds one
    ``Interrupt`` whose value is ``{"type": "toolmesh_approval", "call_id", "tool",
    "arguments", "description"}``. Resuming with ``Command(resume=True)`` runs the call,
    ``Command(resume=False)`` or ``Command(resume="reason")`` refuses it (the reason is
    what the model is shown). The graph needs a checkpointer, as every interrupt does.
    Resumed, the call runs again from its first hook, so keep approval last.

    Raises:
        TypeError: for a resume value that is not a bool or a str.
        RuntimeError: for a call outside a graph run (``tool.ainvoke`` on its own).

    Either way the call fails with kind ``internal`` (the detail goes to the operator's
    log, not the model) and the tool does not run.
    """
    from langgraph.errors import GraphBubbleUp
    from langgraph.types import interrupt

    request = {
        "type": "toolmesh_approval",
        "call_id": call.id,
        "tool": call.name,
        "arguments": json.loads(call.arguments),
        "description": entry.definition.description,
    }
    try:
        answer = interrupt(request)
    except GraphBubbleUp as pause:
        raise Suspension(pause) from None
    except (KeyError, RuntimeError) as exc:  # no graph run around the call: nothing to pause
        raise RuntimeError(
            f"interrupt_for_approval asks through LangGraph's interrupt, which needs a graph run (ToolNode, "
            f"create_react_agent) with a checkpointer; the call of {call.name!r} ran outside one, so it is not run"
        ) from exc
    if isinstance(answer, bool | str):
        return answer
    raise TypeError(
        f"the approval of {call.name!r} was resumed with {type(answer).__name__}; "
        'resume with Command(resume=True), Command(resume=False) or Command(resume="a reason")'
    )
