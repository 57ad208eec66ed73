"""The OpenAI Agents SDK bridge: a toolmesh catalog as the SDK's own ``FunctionTool``s.

Example:
    >>> from agents import Agent, Runner
    >>> from toolmesh.bridges import openai_agents as bridge
    >>> agent = Agent(name="assistant", tools=bridge.tools(registry, hooks=[...]))
    >>> result = await Runner.run(agent, "What is 2 + 3?")

Install with ``pip install 'toolmesh[openai-agents]'``. Importing ``toolmesh`` does not
import the SDK; importing this module does.

Every call the SDK makes runs through toolmesh's own turn (``run_tool_calls``) on the
snapshot the tools were built from, with the hooks given here: policy, limits,
tracing, redaction and failure feedback apply exactly as in a loop of your own. The
model is shown what toolmesh shows it: a failed, refused or invalid call answers with
toolmesh's model feedback, never with the SDK's blanket error text.

What the SDK cannot carry, and how the bridge says so when ``tools()`` runs (one
warning each on the ``toolmesh.bridges`` logger; ``strict=True`` makes each an
``UnsupportedToolError``):

- a hosted (provider-executed) row: left out;
- a name the OpenAI rule (``^[a-zA-Z0-9_-]{1,64}$``) refuses: left out;
- a streaming row, or an MCP row that runs only as a task: exported, and the model
  is shown the final output only.

At call time: audio and binary content other than images and PDFs cannot be a
function output, so such a result raises ``UnsupportedContentError`` (failing the
run, as the provider modules refuse it) unless ``describe_unsupported=True``. The SDK
has no retry signal (toolmesh's feedback is the model's cue to try again) and no way
to stop sibling calls, so a hook's ``StopTurn`` skips its own call only.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeAlias, cast

from agents import FunctionTool, ToolOutputFileContent, ToolOutputImage, ToolOutputText, tool_namespace
from agents.tool_context import ToolContext as AgentsToolContext

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.calls import ToolCall
from toolmesh._core.output import Json, Text, block_text
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry, McpEntry
from toolmesh.providers import openai_responses, rejected_names

from ._common import Crossing, approval_plan, crossing, rows_that_cross, snapshot_of

__all__ = ["ContextFactory", "FunctionOutput", "sdk_output", "tools"]

_FRAMEWORK = "the OpenAI Agents SDK"

ContextFactory: TypeAlias = Callable[[AgentsToolContext[Any]], ToolContext[Any]]
"""Builds toolmesh's ``ToolContext`` for one call from the SDK's ``ToolContext``.

The default is ``ToolContext(call_id=sdk_ctx.tool_call_id, deps=sdk_ctx.context)``: the
SDK's call id, and the run's context object (``Runner.run(..., context=...)``) as ``deps``.
The call id is always set to the SDK's."""

FunctionOutput: TypeAlias = str | list[ToolOutputText | ToolOutputImage | ToolOutputFileContent]
"""What a bridged tool returns to the SDK: text, or text, image and file parts in order."""

_TEXT_BLOCKS = frozenset({Text, Json})


def tools(
    source: ToolRegistry | ToolSnapshot,
    *,
    hooks: Iterable[Hook | HookStack] = (),
    ctx_factory: ContextFactory | None = None,
    strict_json_schema: bool = True,
    namespaces: bool | Mapping[str, str] = False,
    describe_unsupported: bool = False,
    strict: bool = False,
) -> list[FunctionTool]:
    """One ``FunctionTool`` per row, in catalog order, each running its calls through toolmesh.

    A registry is snapshotted now: the tools show and run the rows it holds at this
    moment, whatever it does later (what the model was shown is what runs). Build the
    tools again (per run, e.g. ``agent.clone(tools=tools(registry))``) to pick up a
    catalog change; the declarations are cached per row, so that is cheap.

    Args:
        source: The rows to export: a ``ToolRegistry`` (snapshotted now) or a ``ToolSnapshot``.
        hooks: toolmesh hooks (and policy) every call runs through, in order. A
            ``RequireApproval`` without a callback becomes the SDK's own approval: each row
            its ``when`` covers gets ``needs_approval=True``, so the run stops with an
            interruption before the call; ``state.approve(item)`` runs the call (through the
            other hooks) and ``state.reject(item)`` answers the model with the SDK's
            rejection message. A row that a rule about rows alone (``DenyTools``,
            ``AllowServers``, ...) placed before it refuses is not asked about. A
            ``RequireApproval`` with a callback stays a hook: the callback decides inside
            the call.
        ctx_factory: Builds each call's ``ToolContext`` from the SDK's (see ``ContextFactory``).
        strict_json_schema: Declare each row whose schema has a strict-compatible form with
            it (toolmesh's own rewrite, the one ``providers.openai_responses`` sends) and
            ``strict_json_schema=True``; others keep their schema, not strict. Optional
            parameters a strict model sends as ``null`` are left out again, so defaults apply.
        namespaces: Group each MCP server's rows with the SDK's ``tool_namespace`` (named
            after the server's label; Responses models only). A mapping gives a label's
            description; the default says "Tools of the MCP server '<label>'". The rows
            keep their catalog names inside the namespace.
        describe_unsupported: Replace content a function output cannot carry (audio,
            binary other than images and PDFs) by a short note such as ``[audio: audio/wav]``
            instead of raising ``UnsupportedContentError``.
        strict: Refuse (``UnsupportedToolError``) any row that cannot cross whole, instead
            of warning about it.

    Raises:
        UnsupportedToolError: with ``strict=True``, for a row the SDK cannot carry whole.
        ConfigurationError: for an object among ``hooks`` that is not a hook.
    """
    snapshot = snapshot_of(source)
    plan = approval_plan(hooks)
    bad_names = rejected_names([row for row in snapshot.entries() if crossing(row, _FRAMEWORK) is None], "openai")

    def problem(row: Entry) -> Crossing | None:
        reason = bad_names.get(row.name)
        return Crossing(reason, kept=False) if reason is not None else crossing(row, _FRAMEWORK)

    rows = rows_that_cross(snapshot.entries(), problem, framework=_FRAMEWORK, strict=strict)
    declarations = openai_responses.tools(rows, strict=strict_json_schema, invalid_names="raise")
    made: list[FunctionTool] = []
    for row, declared in zip(rows, declarations, strict=True):
        function = cast("Mapping[str, Any]", declared)
        schema: Mapping[str, Any] = function["parameters"]
        is_strict = function["strict"] is True
        invoker = _Invoker(
            snapshot, row, plan.hooks, ctx_factory, describe_unsupported, is_strict and _has_optional(schema)
        )
        made.append(
            FunctionTool(
                name=row.name,
                description=row.definition.description,
                params_json_schema=copy.deepcopy(dict(schema)),  # plain dicts: the cached declaration is read-only
                on_invoke_tool=invoker,
                strict_json_schema=is_strict,
                needs_approval=plan.needs_approval(row),
            )
        )
    if namespaces is not False:
        made = _grouped(made, rows, {} if namespaces is True else namespaces)
    return made


def _grouped(made: list[FunctionTool], rows: list[Entry], descriptions: Mapping[str, str]) -> list[FunctionTool]:
    """``made`` with each MCP server's tools in a namespace named after its label, in catalog order."""
    servers: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        if isinstance(row, McpEntry):
            servers.setdefault(row.server, []).append(index)
    grouped = list(made)
    for label, indexes in servers.items():
        description = descriptions.get(label) or f"Tools of the MCP server {label!r}."
        for index, tool in zip(
            indexes, tool_namespace(name=label, description=description, tools=[made[i] for i in indexes]), strict=True
        ):
            grouped[index] = tool
    return grouped


def _has_optional(schema: Any, depth: int = 0) -> bool:
    """Whether a strict schema made some parameter nullable that was optional (its nulls need removing).

    A strict schema lists every property as required, so this looks for a nullable
    property at any depth: only then can ``null`` mean "left out".
    """
    if depth > 32:
        return True
    if isinstance(schema, Mapping):
        kind = schema.get("type")
        if kind == "null" or (isinstance(kind, list) and "null" in kind):
            return True
        return any(_has_optional(value, depth + 1) for value in schema.values())
    if isinstance(schema, list):
        return any(_has_optional(value, depth + 1) for value in schema)
    return False


class _Invoker:
    """A bridged tool's ``on_invoke_tool``: one toolmesh turn of one call, its result as SDK output."""

    __slots__ = ("_catalog", "_describe", "_factory", "_hooks", "_name", "_repair", "_snapshot")

    def __init__(
        self,
        snapshot: ToolSnapshot,
        row: Entry,
        hooks: HookStack,
        factory: ContextFactory | None,
        describe_unsupported: bool,
        repair: bool,
    ) -> None:
        self._snapshot = snapshot
        self._name = row.name
        self._hooks = hooks
        self._factory = factory
        self._describe = describe_unsupported
        self._repair = repair
        self._catalog = (row,)

    async def __call__(self, sdk_ctx: AgentsToolContext[Any], arguments: str) -> FunctionOutput:
        call_id: str = getattr(sdk_ctx, "tool_call_id", None) or new_call_id()
        call = self._call(call_id, arguments)
        factory = self._factory
        if factory is None and not self._hooks.hooks and call.problem is None:
            # a turn of one call with no hook and the default context is exactly this dispatch:
            # nothing is paid for what is not configured
            result = await self._snapshot.dispatch(self._name, call.arguments, ToolContext(call_id, sdk_ctx.context))
        else:

            def context(_: ToolCall) -> ToolContext[Any]:
                if factory is not None:
                    return factory(sdk_ctx)
                return ToolContext(call_id, sdk_ctx.context)

            turn = await run_tool_calls(self._snapshot, (call,), ctx_factory=context, hooks=self._hooks)
            result = turn.results[0]
        return sdk_output(result, describe_unsupported=self._describe)

    def _call(self, call_id: str, arguments: str) -> ToolCall:
        if self._repair:
            item = {"type": "function_call", "call_id": call_id, "name": self._name, "arguments": arguments}
            return openai_responses.parse_tool_calls([item], catalog=self._catalog)[0]
        if self._hooks.hooks or not isinstance(arguments, str):
            return ToolCall.from_arguments(call_id, self._name, arguments)
        # no hook reads the call: dispatch parses and checks the model's text itself, as
        # registry.dispatch does for a model's text, so it is not made canonical first
        return ToolCall(call_id, self._name, arguments)


def sdk_output(result: ToolResult, *, describe_unsupported: bool = False) -> FunctionOutput:
    """What the SDK is given for ``result``: its presentation as text, or as text, image and file parts.

    Text and JSON blocks (compact JSON text) give one string; with images or PDFs, the
    blocks become ``ToolOutputText``, ``ToolOutputImage`` and ``ToolOutputFileContent``
    in order. A failed or refused call gives its model feedback.

    Raises:
        UnsupportedContentError: for content a function output cannot carry (audio, other
            binary types), unless ``describe_unsupported``.
    """
    shown = result.presentation
    blocks = shown.blocks
    if len(blocks) == 1 and type(blocks[0]) in _TEXT_BLOCKS:
        return block_text(blocks[0])
    if all(type(block) in _TEXT_BLOCKS for block in blocks):
        return shown.as_text()
    output = openai_responses.tool_results([result], describe_unsupported=describe_unsupported)[0]["output"]
    if isinstance(output, str):
        return output
    parts: list[ToolOutputText | ToolOutputImage | ToolOutputFileContent] = []
    for part in output:
        item = cast("Mapping[str, Any]", part)
        match item.get("type"):
            case "input_text":
                parts.append(ToolOutputText(text=item["text"]))
            case "input_image":
                parts.append(ToolOutputImage(image_url=item["image_url"], detail=item.get("detail")))
            case "input_file":
                parts.append(ToolOutputFileContent(file_data=item["file_data"], filename=item.get("filename")))
    return parts
