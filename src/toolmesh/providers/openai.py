"""OpenAI Chat Completions: tool declarations out, tool calls in, tool messages back.

Example:
    >>> from toolmesh.providers import openai as chat
    >>> completion = client.chat.completions.create(model=..., messages=messages, tools=chat.tools(snapshot))
    >>> message = completion.choices[0].message
    >>> messages.append(message)
    >>> results = await run_tool_calls(snapshot, chat.parse_tool_calls(message))
    >>> messages.extend(chat.tool_results(results))

Tool messages carry text only: a result holding an image is refused with
``UnsupportedContentError`` (use ``openai_responses`` for images, or pass
``describe_unsupported=True``). Chat Completions has no provider-executed tools, so
hosted rows are refused too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, cast

from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.result import ToolResult
from toolmesh._rows.rows import HostedEntry

from ._common import (
    InvalidNames,
    ToolSource,
    UnsupportedToolError,
    entries,
    get,
    is_record,
    make_call,
    malformed_call,
    result_text,
    schemas_of,
)
from ._declarations import copy_top, declarations, freeze
from ._deferred import offered
from ._strict import repair_arguments, strict_parameters

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionToolMessageParam
    from openai.types.shared_params import FunctionDefinition

__all__ = ["parse_tool_calls", "tool_results", "tools"]

_API = "OpenAI Chat Completions"
_PROVIDER = "openai"
_KEYS = {False: _API, True: f"{_API} strict"}
"""Declaration cache keys by ``strict``."""


def tools(
    catalog: ToolSource, *, strict: bool = False, invalid_names: InvalidNames = "skip"
) -> list[ChatCompletionFunctionToolParam]:
    """The ``tools=`` of ``chat.completions.create``: one function tool per row, in catalog order.

    Args:
        catalog: A ``ToolRegistry``, a ``ToolSnapshot`` (what the turn will dispatch) or an
            iterable of rows or ``ToolDefinition``s. A snapshot with deferred rows declares
            what it offers now: its declared rows, the rows its searches found and its
            ``search_tools`` row (``ToolSnapshot.offered``).
        strict: Ask for strict function calling. Each tool whose schema can be made
            strict-compatible is sent with the rewritten schema and ``strict: true``; the
            others with their schema unchanged and ``strict: false``. Pass the same
            catalog to ``parse_tool_calls`` so optional parameters sent as ``null`` are
            left out again.

    Returns:
        Fresh top-level dicts; each ``function`` part is cached per row and read-only
        (``FrozenDict``): copy it to change it.

    Raises:
        UnsupportedToolError: for a name the OpenAI rule rejects, or a hosted row.
    """
    build = _strict_function if strict else _loose_function
    return declarations(
        offered(catalog),
        _KEYS[strict],
        build,
        copy_top,
        _hosted,
        provider=_PROVIDER,
        api=_API,
        invalid_names=invalid_names,
    )


def _hosted(row: HostedEntry) -> ChatCompletionFunctionToolParam:
    raise UnsupportedToolError(
        f"hosted tool {row.name!r} cannot be declared to {_API}, which has no provider-executed "
        "tools; declare it with toolmesh.providers.openai_responses, or leave it out of this turn "
        "with registry.snapshot(active=[...])"
    )


def _function(definition: ToolDefinition, *, strict: bool) -> FunctionDefinition:
    function: FunctionDefinition = {"name": definition.name, "parameters": dict(definition.parameters)}
    if definition.description:
        function["description"] = definition.description
    if strict:
        schema = strict_parameters(definition.parameters, tool=definition.name)
        function["strict"] = schema is not None
        if schema is not None:
            function["parameters"] = schema
    return function


def _strict_function(definition: ToolDefinition) -> ChatCompletionFunctionToolParam:
    return cast(
        "ChatCompletionFunctionToolParam", freeze({"type": "function", "function": _function(definition, strict=True)})
    )


def _loose_function(definition: ToolDefinition) -> ChatCompletionFunctionToolParam:
    return cast(
        "ChatCompletionFunctionToolParam", freeze({"type": "function", "function": _function(definition, strict=False)})
    )


def parse_tool_calls(response: object, *, catalog: ToolSource | None = None) -> list[ToolCall]:
    """The function tool calls of a ``ChatCompletion`` (its first choice) or a ``ChatCompletionMessage``.

    Plain dicts of the same shapes work too. Nothing the model wrote makes it raise:
    arguments that are not valid JSON, and an entry of ``tool_calls`` that is not an
    object, give an invalid ``ToolCall`` (``problem`` set); a ``choices`` or
    ``tool_calls`` that is not a list gives no calls and a warning. Custom (free-form)
    tool calls are not toolmesh's and are skipped.

    Args:
        response: The completion, or one choice's message.
        catalog: The catalog declared with ``strict=True``: a ``null`` sent for an optional
            parameter that does not accept null is removed, so the tool's default applies.
    """
    message = response
    if get(response, "choices") is not None:
        choices = entries(response, "choices", api=_API)
        if not choices:
            return []
        message = get(choices[0], "message")
    schemas = schemas_of(catalog)
    calls: list[ToolCall] = []
    for index, call in enumerate(entries(message, "tool_calls", api=_API)):
        if not is_record(call):
            calls.append(malformed_call(call, provider=_PROVIDER, index=index))
            continue
        if get(call, "type", "function") != "function":
            continue
        function = get(call, "function", {})
        name = get(function, "name")
        arguments = repair_arguments(name, get(function, "arguments"), schemas)
        calls.append(make_call(get(call, "id"), name, arguments, provider=_PROVIDER, index=index))
    return calls


def tool_results(
    results: Iterable[ToolResult], *, describe_unsupported: bool = False
) -> list[ChatCompletionToolMessageParam]:
    """One ``role: tool`` message per result, in order, each answering its call by id.

    Text and JSON (as compact JSON text) are carried; a failed or refused call sends
    its feedback text.

    Args:
        results: The turn's results (``ToolResult.presentation`` is what is sent).
        describe_unsupported: Replace images and other binary content by a short note
            (``[image: image/png]``) instead of refusing them.

    Raises:
        UnsupportedContentError: for binary content, unless ``describe_unsupported``.
    """
    hint = "Use toolmesh.providers.openai_responses, whose tool outputs carry images. "
    return [
        {
            "role": "tool",
            "tool_call_id": result.call_id,
            "content": result_text(
                result, api=f"an {_API} tool message", describe_unsupported=describe_unsupported, hint=hint
            ),
        }
        for result in results
    ]
