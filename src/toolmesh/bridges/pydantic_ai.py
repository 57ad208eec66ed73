"""pydantic-ai: a toolmesh catalog as a pydantic-ai toolset.

Example:
    >>> from pydantic_ai import Agent
    >>> from toolmesh.bridges.pydantic_ai import toolset
    >>> agent = Agent(model, toolsets=[toolset(registry, hooks=[DenyTools("shell*")])])

Every call the agent makes runs as a toolmesh turn of one call (``run_tool_calls``)
against the snapshot its run step listed, so hooks, policy, limits, timeouts, tracing
and redaction apply as they do in a loop of your own. What maps to what:

- A row is a tool: its name, description, parameter schema and output schema
  (``return_schema``); its kind, server, wire name and annotations are on the tool
  definition's ``metadata["toolmesh"]``.
- ``RunContext`` becomes the call's ``ToolContext``: ``tool_call_id`` is the call id,
  ``deps`` the deps, ``retry`` the retry count. A tool's progress and partial outputs
  are emitted into the run's event stream as ``ToolProgressEvent`` / ``ToolPartialEvent``.
- A result's presentation reaches the model as pydantic-ai content, block by block in
  order: text as ``str``, JSON as its value, images as ``BinaryImage``, audio and binary
  resources as ``BinaryContent``.
- Invalid arguments and retryable failures (timeout, unavailable, rate limited) raise
  ``ModelRetry`` with toolmesh's model feedback; other failures and refusals raise
  ``ToolFailed`` with it. A skipped call answers with what the hook said.
- ``RequireApproval`` hooks become pydantic-ai's deferred approval: the rows they
  cover are ``requires_approval`` tools (definition kind ``"unapproved"``), so the run
  ends with ``DeferredToolRequests`` and the user's decision
  (``DeferredToolResults``) comes back into the same call; the hook's callback is not
  called. A rule about rows alone placed before it (``DenyTools``, ``DenyAnnotated``,
  ...) that refuses a row keeps it from being marked, so nobody is asked about a call a
  rule refuses.
- Built from a ``ToolRegistry``, the toolset lists a new snapshot at each run step,
  so a catalog change shows at the next step; built from a ``ToolSnapshot``, it lists
  that snapshot only.

What cannot cross: a hosted row (a provider-executed tool) is not a pydantic-ai function
tool; it is left out with a warning naming it, or with ``strict=True`` the toolset
refuses it (``UnsupportedToolError``), when the toolset is built and at any later step
that lists one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pydantic_ai import CustomEvent, RunContext
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryContent, BinaryImage
from pydantic_ai.tools import AgentDepsT, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.calls import ToolCall
from toolmesh._core.output import Audio, ContentBlock, EmbeddedResource, Image, Json, Text, ToolOutput
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._dispatch.invalid import argument_error
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry, HostedEntry, McpEntry

from ._common import asks_retry, is_pending, needs_approval, plain_json, report_rows, with_framework_approval

__all__ = ["ToolPartialEvent", "ToolProgressEvent", "ToolmeshToolset", "toolset"]

_FRAMEWORK = "pydantic-ai"

_ANY_OBJECT = SchemaValidator(core_schema.dict_schema())
"""pydantic-ai parses the model's arguments into an object; the row checks them in the turn."""

_RUN_CONTEXT: ContextVar[RunContext[Any] | None] = ContextVar("toolmesh_pydantic_ai_run_context", default=None)
"""The pydantic-ai context of the call whose turn is running (hooks of this bridge read its approval)."""


@dataclass(kw_only=True)
class ToolProgressEvent(CustomEvent, name="toolmesh.progress"):
    """A toolmesh tool reported progress (``ctx.report_progress``, or an MCP progress notification)."""

    progress: float
    """How far the call got."""
    total: float | None = None
    """The total ``progress`` counts up to, when known."""
    message: str | None = None
    """What the tool said about it."""


@dataclass(kw_only=True)
class ToolPartialEvent(CustomEvent, name="toolmesh.partial"):
    """A streaming toolmesh tool produced a partial output (the model gets the whole output at the end)."""

    content: Any
    """The partial output as pydantic-ai content: a ``str``, a JSON value, a ``BinaryContent``, or a list of these."""


def toolset(
    source: ToolRegistry | ToolSnapshot,
    *,
    hooks: Iterable[Hook | HookStack] = (),
    strict: bool = False,
    max_retries: int | None = None,
    strict_schemas: bool | None = None,
    id: str | None = None,
) -> ToolmeshToolset[Any]:
    """A pydantic-ai toolset of ``source``'s rows, dispatched through toolmesh.

    Args:
        source: A ``ToolRegistry`` (a fresh snapshot at each run step) or a ``ToolSnapshot``
            (these rows, always).
        hooks: Hooks and policy, run for every call in order, as ``run_tool_calls`` runs them.
            ``RequireApproval`` becomes pydantic-ai's deferred approval.
        strict: Refuse rows that cannot cross (``UnsupportedToolError``) instead of leaving
            them out with a warning.
        max_retries: How many times the model may retry a tool's failed calls; the agent's
            default (``Agent(retries=...)``) when None.
        strict_schemas: pydantic-ai's ``ToolDefinition.strict`` for every row (None: the
            model decides, as for pydantic-ai's own tools).
        id: The toolset's id, unique among the agent's toolsets (pydantic-ai's durable
            execution names toolsets by it).

    Raises:
        UnsupportedToolError: with ``strict=True``, for a row that cannot cross.
        ConfigurationError: for an object in ``hooks`` that is not a hook.
        TypeError: for a ``source`` that is neither a registry nor a snapshot.
    """
    return ToolmeshToolset(
        source, hooks=hooks, strict=strict, max_retries=max_retries, strict_schemas=strict_schemas, id=id
    )


def _approved() -> bool:
    run_context = _RUN_CONTEXT.get()
    return run_context is not None and run_context.tool_call_approved


class _Shared:
    """What every step of one toolset shares: the source, the options, the hooks, definitions made so far."""

    __slots__ = (
        "approval_hooks",
        "definitions",
        "hooks",
        "max_retries",
        "source",
        "strict",
        "strict_schemas",
        "warned",
    )

    def __init__(
        self,
        source: ToolRegistry | ToolSnapshot,
        hooks: Iterable[Hook | HookStack],
        strict: bool,
        max_retries: int | None,
        strict_schemas: bool | None,
    ) -> None:
        if not isinstance(source, ToolRegistry | ToolSnapshot):
            raise TypeError(f"toolset() takes a ToolRegistry or a ToolSnapshot, got {type(source).__name__}")
        self.source = source
        flat = HookStack(hooks).hooks
        self.hooks = with_framework_approval(flat, _approved)
        """The hooks each call's turn runs, ``RequireApproval`` standing for pydantic-ai's approval."""
        self.approval_hooks = flat
        """The hooks as given, read for which rows need approval."""
        self.strict = strict
        self.max_retries = max_retries
        self.strict_schemas = strict_schemas
        self.definitions: dict[str, tuple[Entry, ToolDefinition | None]] = {}
        """Each row's pydantic-ai definition (None: it cannot cross), kept while the row is the same object."""
        self.warned: set[str] = set()

    def definitions_of(self, rows: Iterable[Entry]) -> list[tuple[Entry, ToolDefinition]]:
        """The rows that can cross, each with its definition; says what cannot (``report_rows``)."""
        made: dict[str, tuple[Entry, ToolDefinition | None]] = {}
        problems: dict[str, str] = {}
        known = self.definitions
        for row in rows:
            cached = known.get(row.name)
            if cached is None or cached[0] is not row:
                cached = (row, self._definition(row))
            made[row.name] = cached
            if cached[1] is None:
                problems[row.name] = _cannot_cross(row)
        report_rows(problems, framework=_FRAMEWORK, strict=self.strict, warned=self.warned)
        self.definitions = made
        return [(row, definition) for row, definition in made.values() if definition is not None]

    def _definition(self, row: Entry) -> ToolDefinition | None:
        if isinstance(row, HostedEntry):
            return None
        definition = row.definition
        output_schema = definition.output_schema
        return ToolDefinition(
            name=row.name,
            parameters_json_schema=plain_json(definition.parameters),
            description=definition.description or None,
            strict=self.strict_schemas,
            kind="unapproved" if needs_approval(self.approval_hooks, row) else "function",
            metadata={"toolmesh": _row_metadata(row)},
            return_schema=plain_json(output_schema) if output_schema is not None else None,
        )


def _cannot_cross(row: Entry) -> str:
    provider = f" ({row.provider})" if isinstance(row, HostedEntry) and row.provider else ""
    return (
        f"it is a hosted tool, run by its provider{provider}, and pydantic-ai function tools run here; "
        "give the Agent pydantic-ai's own native tool (e.g. WebSearchTool) instead"
    )


def _row_metadata(row: Entry) -> dict[str, Any]:
    found: dict[str, Any] = {"kind": row.kind}
    if isinstance(row, McpEntry):
        found["server"] = row.server
        found["wire_name"] = row.wire_name
    annotations = row.capabilities.annotations
    if annotations is not None:
        hints = {
            "read_only": annotations.read_only,
            "destructive": annotations.destructive,
            "idempotent": annotations.idempotent,
            "open_world": annotations.open_world,
        }
        found["annotations"] = {key: value for key, value in hints.items() if value is not None}
    return found


class ToolmeshToolset(AbstractToolset[AgentDepsT]):
    """A pydantic-ai toolset of a toolmesh registry's or snapshot's rows (make one with ``toolset()``).

    At each run step (``for_run_step``) a toolset built from a registry takes a snapshot;
    the step lists its rows and runs its calls, so what the model was shown is what runs.
    The registry's lifetime (its MCP connections) stays yours: enter it around the agent run.
    """

    def __init__(
        self,
        source: ToolRegistry | ToolSnapshot,
        *,
        hooks: Iterable[Hook | HookStack] = (),
        strict: bool = False,
        max_retries: int | None = None,
        strict_schemas: bool | None = None,
        id: str | None = None,
    ) -> None:
        self._shared = _Shared(source, hooks, strict, max_retries, strict_schemas)
        self._id = id
        self._catalog: ToolRegistry | ToolSnapshot = source
        self._shared.definitions_of(source.entries())  # what cannot cross is said now

    def _at_step(self, snapshot: ToolSnapshot) -> ToolmeshToolset[AgentDepsT]:
        step = copy.copy(self)
        step._catalog = snapshot
        return step

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def tool_name_conflict_hint(self) -> str:
        return (
            "Give one of the rows another model-visible name in the registry (a NamePolicy alias), or wrap "
            "the toolset in a PrefixedToolset."
        )

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """This step's toolset: a new snapshot of a registry (a snapshot stays as it is)."""
        catalog = self._shared.source
        if isinstance(catalog, ToolRegistry):
            return self._at_step(catalog.snapshot())
        return self

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        shared = self._shared
        catalog = self._catalog  # a registry only when pydantic-ai did not ask for this step's toolset
        listed = catalog.snapshot() if isinstance(catalog, ToolRegistry) else catalog
        max_retries = shared.max_retries if shared.max_retries is not None else ctx.max_retries
        check_early = not shared.hooks.handles_invalid
        return {
            definition.name: ToolsetTool(
                toolset=self,
                tool_def=definition,
                max_retries=max_retries,
                args_validator=_ANY_OBJECT,
                args_validator_func=_checker(row) if check_early and definition.kind == "unapproved" else None,
            )
            for row, definition in shared.definitions_of(listed.entries())
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Run the call as a toolmesh turn of one call; answer as pydantic-ai expects.

        Raises:
            ModelRetry: invalid arguments, or a retryable failure (toolmesh's feedback as its message).
            ToolFailed: any other failure or refusal.
            ApprovalRequired: a call a ``RequireApproval`` covers that the user has not approved.
        """
        call = ToolCall.from_arguments(ctx.tool_call_id or new_call_id(), name, tool_args)
        token = _RUN_CONTEXT.set(ctx)
        try:
            turn = await run_tool_calls(
                self._catalog, (call,), ctx_factory=_Call(ctx).context, hooks=self._shared.hooks, max_concurrency=1
            )
        finally:
            _RUN_CONTEXT.reset(token)
        return _answer(turn.results[0])


def _checker(row: Entry) -> Callable[..., None]:
    """pydantic-ai's ``args_validator_func`` for a row that needs approval: the row checks the arguments
    before anyone is asked, and the model is sent back to fix them (used when no hook handles invalid
    calls, so none is passed over)."""

    def check(ctx: RunContext[Any], **arguments: Any) -> None:
        error = argument_error(row, ToolCall.from_arguments("", row.name, arguments).arguments)
        if error is not None:
            raise ModelRetry(error.model_feedback)

    return check


class _Call:
    """One call's ``ToolContext``, made from its pydantic-ai ``RunContext``; progress and partial
    outputs go to the run's event stream."""

    __slots__ = ("run_context",)

    def __init__(self, run_context: RunContext[Any]) -> None:
        self.run_context = run_context

    def context(self, call: ToolCall) -> ToolContext[Any]:
        run_context = self.run_context
        return ToolContext(
            call_id=call.id,
            deps=run_context.deps,
            retry=run_context.retry,
            progress=self.progress,
            on_partial=self.partial,
        )

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.run_context.emit(ToolProgressEvent(progress=progress, total=total, message=message))

    async def partial(self, output: ToolOutput) -> None:
        await self.run_context.emit(ToolPartialEvent(content=_content(output)))


def _answer(result: ToolResult) -> Any:
    """What pydantic-ai expects of ``call_tool`` for ``result``: content, or the exception that says why not."""
    disposition = result.disposition
    if disposition is Disposition.SUCCEEDED:
        return _content(result.presentation)
    if disposition is Disposition.SKIPPED:
        if is_pending(result):
            raise ApprovalRequired()
        return _content(result.presentation)
    feedback = result.presentation.as_text()
    if asks_retry(result):
        raise ModelRetry(feedback)
    raise ToolFailed(feedback)


def _content(output: ToolOutput) -> Any:
    """A toolmesh output as pydantic-ai tool-return content: one item, or a list of items in order.

    Text is a ``str``, JSON its value, an image a ``BinaryImage``, audio and a binary
    resource ``BinaryContent``, a text resource its text, a resource link a short note.
    """
    blocks = output.blocks
    if len(blocks) == 1:
        return _item(blocks[0])
    if not blocks:
        return ""
    return [_item(block) for block in blocks]


def _item(block: ContentBlock) -> Any:
    match block:
        case Text(text=text):
            return text
        case Json(value=value):
            return value
        case Image(data=data, mime_type=mime):
            return BinaryImage(data=bytes(data), media_type=mime)
        case Audio(data=data, mime_type=mime):
            return BinaryContent(data=bytes(data), media_type=mime)
        case EmbeddedResource(blob=bytes() as blob, mime_type=mime):
            return BinaryContent.narrow_type(BinaryContent(data=blob, media_type=mime or "application/octet-stream"))
    return ToolOutput([block]).as_text()
