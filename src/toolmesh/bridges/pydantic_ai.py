"""The pydantic-ai bridge: a toolmesh catalog as one pydantic-ai toolset.

Example:
    >>> from pydantic_ai import Agent
    >>> from toolmesh.bridges.pydantic_ai import toolset
    >>> agent = Agent(model, toolsets=[toolset(registry, hooks=[DenyTools("shell*")])])

Install with ``pip install 'toolmesh[pydantic-ai]'``. Importing ``toolmesh`` does not
import pydantic-ai; importing this module does.

Every call the agent makes runs through toolmesh's own turn (``run_tool_calls`` with
one call) against the snapshot its run step listed, so hooks, policy, limits,
timeouts, tracing and redaction apply as they do in a loop of your own. What maps to
what:

- A row is a tool: its name, description, parameter schema and output schema
  (``return_schema``); its kind, server, wire name and annotations are on the tool
  definition's ``metadata["toolmesh"]``.
- ``RunContext`` becomes the call's ``ToolContext`` (``tool_context``): the call id,
  ``deps``, the retry count; a tool's progress and partial outputs go into the run's
  event stream as ``ToolProgressEvent`` / ``ToolPartialEvent``.
- A result's presentation reaches the model as pydantic-ai content, block by block in
  order: text as ``str``, JSON as its value, images as ``BinaryImage``, audio and binary
  resources as ``BinaryContent``.
- Invalid arguments and retryable failures (timeout, unavailable, rate limited) raise
  ``ModelRetry`` with toolmesh's model feedback; other failures and refusals raise
  ``ToolFailed`` with it. A skipped call answers with what the hook said.
- A ``RequireApproval`` without a callback becomes pydantic-ai's deferred approval:
  the rows it covers are ``requires_approval`` tools (definition kind ``"unapproved"``),
  so the run ends with ``DeferredToolRequests`` and the user's decision
  (``DeferredToolResults``) comes back into the same call. One with a callback stays a
  hook: the callback decides inside the call.
- Built from a ``ToolRegistry``, the toolset lists a new snapshot at each run step
  (``for_run_step``), so a catalog change shows at the next step; built from a
  ``ToolSnapshot``, it lists that snapshot only.

What cannot cross: a hosted row (a provider-executed tool) is not a pydantic-ai function
tool. It is left out with a warning on the ``toolmesh.bridges`` logger naming it, or
with ``strict=True`` refused (``UnsupportedToolError``), when the toolset is built and
at any later step that lists one. Streaming rows and MCP task rows cross whole: their
partial outputs and progress are events of the run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from pydantic_ai import CustomEvent, RunContext
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryContent, BinaryImage
from pydantic_ai.tools import AgentDepsT, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind
from toolmesh._core.output import Audio, ContentBlock, EmbeddedResource, Image, Json, Text, ToolOutput
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._dispatch.invalid import argument_error
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry, HostedEntry, McpEntry

from ._common import Crossing, approval_plan, crossing, rows_that_cross, snapshot_of

__all__ = ["ContextFactory", "ToolPartialEvent", "ToolProgressEvent", "ToolmeshToolset", "tool_context", "toolset"]

_FRAMEWORK = "pydantic-ai"

ContextFactory: TypeAlias = Callable[[RunContext[Any]], ToolContext[Any]]
"""Builds toolmesh's ``ToolContext`` for one call from pydantic-ai's ``RunContext``
(``tool_context`` by default; start from it to add to it). The call id is always set to
the ``RunContext``'s."""

_ANY_OBJECT = SchemaValidator(core_schema.dict_schema())
"""pydantic-ai parses the model's arguments into an object; the row checks them in the turn."""


@dataclass(kw_only=True)
class ToolProgressEvent(CustomEvent, name="toolmesh.progress"):
    """A toolmesh tool reported progress (``ctx.report_progress``, an MCP progress notification or task status)."""

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
    ctx_factory: ContextFactory | None = None,
    max_retries: int | None = None,
    strict_schemas: bool | None = None,
    strict: bool = False,
    id: str | None = None,
) -> ToolmeshToolset[Any]:
    """A pydantic-ai toolset of ``source``'s rows, each call dispatched through toolmesh.

    Args:
        source: A ``ToolRegistry`` (a new snapshot at each run step) or a ``ToolSnapshot``
            (these rows, always).
        hooks: toolmesh hooks and policy, run for every call in order, as ``run_tool_calls``
            runs them. A ``RequireApproval`` without a callback becomes pydantic-ai's
            deferred approval for the rows its ``when`` covers, unless a rule about rows
            alone placed before it (``DenyTools``, ``AllowServers``, ...) refuses the row:
            nobody is asked about a call a rule refuses. One with a callback stays a hook.
        ctx_factory: Builds each call's ``ToolContext`` from the ``RunContext``
            (``tool_context`` by default).
        max_retries: How many times the model may retry a tool's failed calls; the agent's
            default (``Agent(retries=...)``) when None.
        strict_schemas: pydantic-ai's ``ToolDefinition.strict`` for every row (None: the
            model decides, as for pydantic-ai's own tools).
        strict: Refuse rows that cannot cross (``UnsupportedToolError``) instead of leaving
            them out with a warning.
        id: The toolset's id, unique among the agent's toolsets (pydantic-ai's durable
            execution names toolsets by it).

    Raises:
        UnsupportedToolError: with ``strict=True``, for a row that cannot cross.
        ConfigurationError: for an object in ``hooks`` that is not a hook.
        TypeError: for a ``source`` that is neither a registry nor a snapshot.
    """
    return ToolmeshToolset(
        source,
        hooks=hooks,
        ctx_factory=ctx_factory,
        max_retries=max_retries,
        strict_schemas=strict_schemas,
        strict=strict,
        id=id,
    )


def tool_context(run_context: RunContext[Any]) -> ToolContext[Any]:
    """The ``ToolContext`` of the call ``run_context`` runs (the default ``ctx_factory``).

    Its call id is the ``tool_call_id``, its ``deps`` the run's deps, its ``retry`` the
    tool's retry count; the tool's progress and partial outputs are emitted into the run's
    event stream as ``ToolProgressEvent`` and ``ToolPartialEvent``.
    """
    events = _Events(run_context)
    return ToolContext(
        call_id=run_context.tool_call_id or new_call_id(),
        deps=run_context.deps,
        retry=run_context.retry,
        progress=events.progress,
        on_partial=events.partial,
    )


class _Events:
    """Emits a call's progress and partial outputs into its run's event stream."""

    __slots__ = ("run_context",)

    def __init__(self, run_context: RunContext[Any]) -> None:
        self.run_context = run_context

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.run_context.emit(ToolProgressEvent(progress=progress, total=total, message=message))

    async def partial(self, output: ToolOutput) -> None:
        await self.run_context.emit(ToolPartialEvent(content=_content(output)))


class _Shared:
    """What every run step of one toolset shares: the source, the options, the hooks, the definitions made."""

    __slots__ = ("definitions", "factory", "hooks", "max_retries", "plan", "source", "strict", "strict_schemas")

    def __init__(
        self,
        source: ToolRegistry | ToolSnapshot,
        hooks: Iterable[Hook | HookStack],
        ctx_factory: ContextFactory | None,
        max_retries: int | None,
        strict_schemas: bool | None,
        strict: bool,
    ) -> None:
        self.source = source
        self.plan = approval_plan(hooks)
        """Which rows pydantic-ai's approval asks about."""
        self.hooks = self.plan.hooks
        """The hooks each call's turn runs (the approval pydantic-ai carries taken out)."""
        self.factory = ctx_factory or tool_context
        self.max_retries = max_retries
        self.strict_schemas = strict_schemas
        self.strict = strict
        self.definitions: dict[str, tuple[Entry, ToolDefinition | None]] = {}
        """Each row's pydantic-ai definition (None: it does not cross), kept while the row is the same object."""

    def definitions_of(self, rows: list[Entry]) -> list[tuple[Entry, ToolDefinition]]:
        """The rows that cross, each with its definition; says what does not (``rows_that_cross``)."""
        known = self.definitions
        fresh = [row for row in rows if (cached := known.get(row.name)) is None or cached[0] is not row]
        crossing_ids = {id(row) for row in rows_that_cross(fresh, _problem, framework=_FRAMEWORK, strict=self.strict)}
        made: dict[str, tuple[Entry, ToolDefinition | None]] = {}
        for row in rows:
            cached = known.get(row.name)
            if cached is None or cached[0] is not row:
                cached = (row, self._definition(row) if id(row) in crossing_ids else None)
            made[row.name] = cached
        self.definitions = made
        return [(row, definition) for row, definition in made.values() if definition is not None]

    def _definition(self, row: Entry) -> ToolDefinition:
        definition = row.definition
        output_schema = definition.output_schema
        return ToolDefinition(
            name=row.name,
            parameters_json_schema=_plain(definition.parameters),
            description=definition.description or None,
            strict=self.strict_schemas,
            kind="unapproved" if self.plan.needs_approval(row) else "function",
            metadata={"toolmesh": _row_metadata(row)},
            return_schema=_plain(output_schema) if output_schema is not None else None,
        )


def _problem(row: Entry) -> Crossing | None:
    """What pydantic-ai cannot carry of ``row``: a hosted row only (partial outputs and task
    statuses are events of the run)."""
    return crossing(row, _FRAMEWORK) if isinstance(row, HostedEntry) else None


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


def _plain(value: Any) -> Any:
    """A deep copy of JSON-like data as plain dicts and lists: pydantic-ai may change what it is given."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


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
        ctx_factory: ContextFactory | None = None,
        max_retries: int | None = None,
        strict_schemas: bool | None = None,
        strict: bool = False,
        id: str | None = None,
    ) -> None:
        snapshot = snapshot_of(source)
        self._shared = _Shared(source, hooks, ctx_factory, max_retries, strict_schemas, strict)
        self._id = id
        self._catalog: ToolRegistry | ToolSnapshot = source
        self._shared.definitions_of(snapshot.entries())  # what cannot cross is said now

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
        source = self._shared.source
        if not isinstance(source, ToolRegistry):
            return self
        step = copy.copy(self)
        step._catalog = source.snapshot()
        return step

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
            ApprovalRequired: a call that needs approval the user has not given (when a
                wrapper toolset took the ``"unapproved"`` kind off its definition).
        """
        shared = self._shared
        catalog = self._catalog
        if shared.plan.approvals and not ctx.tool_call_approved:
            row = catalog.get(name)
            if row is not None and shared.plan.needs_approval(row):
                raise ApprovalRequired()
        call_id = ctx.tool_call_id or new_call_id()
        tool_ctx = shared.factory(ctx)
        if tool_ctx.call_id != call_id:
            tool_ctx.call_id = call_id
        hooks = shared.hooks
        if not hooks.hooks:
            # a turn of one call with no hook is exactly this dispatch: nothing is paid for
            # what is not configured (the arguments are the object pydantic-ai parsed)
            return _answer(await catalog.dispatch(name, tool_args, tool_ctx))
        call = ToolCall.from_arguments(call_id, name, tool_args)
        turn = await run_tool_calls(catalog, (call,), ctx_factory=lambda _: tool_ctx, hooks=hooks, max_concurrency=1)
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


def _answer(result: ToolResult) -> Any:
    """What pydantic-ai expects of ``call_tool`` for ``result``: content, or the exception that says why not.

    Invalid arguments and retryable errors go back to the model to try again
    (``ModelRetry``); any other failure or refusal is final for the call (``ToolFailed``).
    """
    disposition = result.disposition
    if disposition is Disposition.SUCCEEDED or disposition is Disposition.SKIPPED:
        return _content(result.presentation)
    feedback = result.presentation.as_text()
    error = result.error
    if error is not None and (error.kind is ErrorKind.INVALID_ARGUMENTS or error.retryable):
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
