"""OpenAI Responses API: tool declarations out, function calls in, function call outputs back.

Example:
    >>> from toolmesh.providers import openai_responses as responses
    >>> response = client.responses.create(model=..., input=items, tools=responses.tools(snapshot))
    >>> items += response.output
    >>> results = await run_tool_calls(snapshot, responses.parse_tool_calls(response))
    >>> items += responses.tool_results(results)

Function call outputs carry text, images (``input_image``) and PDF files
(``input_file``). Hosted rows for OpenAI (``{"type": "web_search"}``, ...) are
declared as they are; the provider runs them and they never reach ``parse_tool_calls``.

``mcp_call_item(result)`` describes an MCP row's call as the Responses API's own
``mcp_call`` output item, so a gateway reports MCP calls the way OpenAI does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.metadata import MCP_ARGUMENTS, MCP_SERVER_LABEL, MCP_WIRE_NAME
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._rows.rows import HostedEntry

from ._common import (
    InvalidNames,
    Part,
    TextPart,
    ToolSource,
    check_hosted,
    entries,
    get,
    make_call,
    plain,
    render,
    schemas_of,
)
from ._declarations import copy_top, declarations, freeze
from ._deferred import deferral, found_rows, namespaces, offered, record_found, search_tool_name
from ._strict import repair_arguments, strict_parameters

if TYPE_CHECKING:
    from openai.types.responses import FunctionToolParam, ToolParam
    from openai.types.responses.response_function_call_output_item_param import ResponseFunctionCallOutputItemParam
    from openai.types.responses.response_input_item_param import FunctionCallOutput
    from openai.types.responses.response_tool_search_output_item_param_param import (
        ResponseToolSearchOutputItemParamParam as ToolSearchOutput,
    )

__all__ = ["ToolSearchMode", "mcp_call_item", "parse_tool_calls", "tool_results", "tools"]

ToolSearchMode: TypeAlias = Literal["client", "hosted", "function"]
"""How a turn with deferred rows searches on the Responses API (see ``tools``)."""

_API = "the OpenAI Responses API"
_PROVIDER = "openai"
_KEYS = {False: _API, True: f"{_API} strict"}
"""Declaration cache keys by ``strict``."""
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
_FILE_TYPES = frozenset({"application/pdf"})

# JSON-RPC codes reported for failures that did not come with a code of their own.
_JSONRPC_CODES: Mapping[str, int] = MappingProxyType(
    {
        "invalid_arguments": -32602,
        "not_found": -32602,
        "timeout": -32001,
        "unavailable": -32000,
        "cancelled": -32800,
    }
)


def tools(
    catalog: ToolSource,
    *,
    strict: bool = False,
    invalid_names: InvalidNames = "skip",
    tool_search: ToolSearchMode = "client",
) -> list[ToolParam]:
    """The ``tools=`` of ``responses.create``: function tools and OpenAI hosted tools, in catalog order.

    A snapshot with deferred rows declares its other rows as usual and searches the
    deferred ones as ``tool_search`` says:

    - ``"client"``: a ``tool_search`` tool with ``execution: "client"``; the model's
      ``tool_search_call`` is parsed as a call of the turn's search row, which toolmesh
      answers from its index with a ``tool_search_output`` item that loads the tools found
      (``tool_results``). Deferred rows are not declared at all.
    - ``"hosted"``: the deferred rows are declared with ``defer_loading: true`` (an MCP
      server's rows in one ``namespace`` named by its label) beside a hosted ``tool_search``;
      OpenAI searches them, and ``parse_tool_calls(response, catalog=snapshot)`` records
      what its ``tool_search_output`` items loaded.
    - ``"function"``: as Chat Completions: the search row is a plain function, and the rows
      found are declared on the next call.

    Args:
        catalog: A ``ToolRegistry``, a ``ToolSnapshot`` (what the turn will dispatch) or an
            iterable of rows or ``ToolDefinition``s.
        strict: Ask for strict function calling. Each tool whose schema can be made
            strict-compatible is sent with the rewritten schema and ``strict: true``; the
            others with their schema unchanged and ``strict: false`` (the API's own
            default is strict, so ``strict`` is always sent). Pass the same catalog to
            ``parse_tool_calls`` so optional parameters sent as ``null`` are left out again.
        invalid_names: A row whose name the OpenAI rule rejects is left out with a
            warning (``"skip"``), so the others can still be declared; ``"raise"`` refuses
            the whole catalog instead. ``rejected_names(catalog, "openai")`` lists them.

    Returns:
        Fresh top-level dicts; a function tool's parts are cached per row and read-only
        (``FrozenDict``, ``FrozenList``): copy one to change it.

    Raises:
        UnsupportedToolError: for another provider's hosted tool, or a rejected name with
            ``invalid_names="raise"``.
    """
    build = _strict_function if strict else _loose_function
    split = deferral(catalog) if tool_search != "function" else None
    if split is None:
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
    declared = declarations(
        split.declared,
        _KEYS[strict],
        build,
        copy_top,
        _hosted,
        provider=_PROVIDER,
        api=_API,
        invalid_names=invalid_names,
    )
    if tool_search == "client":
        search = split.search_row.definition
        declared.append(
            cast(
                "ToolParam",
                {
                    "type": "tool_search",
                    "execution": "client",
                    "description": search.description,
                    "parameters": dict(search.parameters),
                },
            )
        )
        return declared
    if tool_search != "hosted":
        raise ValueError(f"tool_search must be 'client', 'hosted' or 'function', not {tool_search!r}")
    declared.extend(_loadable(split.deferred, strict=strict, invalid_names=invalid_names, defer=True))
    declared.append(cast("ToolParam", {"type": "tool_search"}))
    return declared


def _loadable(rows: list[Any], *, strict: bool, invalid_names: InvalidNames, defer: bool) -> list[ToolParam]:
    """Function tools for ``rows`` (``defer_loading`` when ``defer``), an MCP server's rows in one ``namespace``."""
    build = _strict_function if strict else _loose_function
    loose, servers = namespaces(rows)

    def functions(group: list[Any]) -> list[dict[str, Any]]:
        made = declarations(
            group, _KEYS[strict], build, copy_top, _hosted, provider=_PROVIDER, api=_API, invalid_names=invalid_names
        )
        return [{**item, "defer_loading": True} if defer else dict(item) for item in made]

    loaded: list[Any] = functions(loose)
    for label, group in servers.items():
        inner = functions(group)
        if inner:
            description = f"Tools of the MCP server {label!r}."
            loaded.append({"type": "namespace", "name": label, "description": description, "tools": inner})
    return cast("list[ToolParam]", loaded)


def _hosted(row: HostedEntry) -> ToolParam:
    return cast("ToolParam", plain(check_hosted(row, (_PROVIDER,), _API)))


def _function(definition: ToolDefinition, *, strict: bool) -> FunctionToolParam:
    schema = strict_parameters(definition.parameters, tool=definition.name) if strict else None
    tool: FunctionToolParam = {
        "type": "function",
        "name": definition.name,
        "parameters": schema if schema is not None else dict(definition.parameters),
        "strict": schema is not None,
    }
    if definition.description:
        tool["description"] = definition.description
    return cast("FunctionToolParam", freeze(tool))


def _strict_function(definition: ToolDefinition) -> ToolParam:
    return _function(definition, strict=True)


def _loose_function(definition: ToolDefinition) -> ToolParam:
    return _function(definition, strict=False)


def parse_tool_calls(response: object, *, catalog: ToolSource | None = None) -> list[ToolCall]:
    """The function calls of a ``Response`` (or of a list of output items), in order.

    Plain dicts of the same shapes work too. Nothing the model wrote makes it raise:
    arguments that are not valid JSON give an invalid ``ToolCall`` (``problem`` set); an
    ``output`` that is not a list gives no calls and a warning, and an item that is not a
    ``function_call`` object is skipped. Hosted tools' items (``web_search_call``, ...)
    and custom tool calls are not toolmesh's and are skipped too.

    Args:
        response: The response, or its ``output`` items.
        catalog: The catalog declared with ``strict=True``: a ``null`` sent for an optional
            parameter that does not accept null is removed, so the tool's default applies.
    """
    items = response if isinstance(response, list | tuple) else entries(response, "output", api=_API)
    schemas = schemas_of(catalog)
    calls: list[ToolCall] = []
    for index, item in enumerate(items):
        kind = get(item, "type")
        if kind == "tool_search_call" and get(item, "execution") == "client":
            arguments = get(item, "arguments", {})
            name = search_tool_name(catalog)
            calls.append(make_call(get(item, "call_id"), name, arguments, provider=_PROVIDER, index=index))
            continue
        if kind == "tool_search_output" and get(item, "execution") == "server":
            record_found(catalog, _loaded_names(get(item, "tools", [])), "tool_search", None)
            continue
        if kind != "function_call":
            continue
        name = get(item, "name")
        arguments = repair_arguments(name, get(item, "arguments"), schemas)
        calls.append(make_call(get(item, "call_id"), name, arguments, provider=_PROVIDER, index=index))
    return calls


def _loaded_names(tools: object) -> list[str]:
    """The function names a ``tool_search_output`` loaded (inside namespaces too)."""
    names: list[str] = []
    for tool in tools if isinstance(tools, list | tuple) else ():
        if get(tool, "type") == "namespace":
            names.extend(_loaded_names(get(tool, "tools", [])))
        elif isinstance(get(tool, "name"), str):
            names.append(get(tool, "name"))
    return names


def tool_results(
    results: Iterable[ToolResult], *, describe_unsupported: bool = False, strict: bool = False
) -> list[FunctionCallOutput | ToolSearchOutput]:
    """One ``function_call_output`` item per result, in order, each answering its call by ``call_id``.

    A call of a turn's search row (a client-executed ``tool_search_call``) is answered with a
    ``tool_search_output`` item that loads the tools found (``strict`` as given to ``tools``).

    Text-only output is sent as a string; output with images or PDFs as a list of
    ``input_text``, ``input_image`` and ``input_file`` items. A failed or refused call
    sends its feedback text.

    Args:
        results: The turn's results (``ToolResult.presentation`` is what is sent).
        describe_unsupported: Replace content the API cannot carry (audio, other binary
            types) by a short note instead of refusing it.

    Raises:
        UnsupportedContentError: for such content, unless ``describe_unsupported``.
    """
    items: list[FunctionCallOutput | ToolSearchOutput] = []
    for result in results:
        found = found_rows(result)
        if found is not None:
            loaded = _loadable(list(found), strict=strict, invalid_names="skip", defer=False)
            search_output: ToolSearchOutput = {
                "type": "tool_search_output",
                "call_id": result.call_id,
                "execution": "client",
                "status": "completed",
                "tools": cast("list[Any]", loaded),
            }
            items.append(search_output)
            continue
        parts = render(
            result,
            api="a Responses API function call output",
            media_types=_IMAGE_TYPES | _FILE_TYPES,
            describe_unsupported=describe_unsupported,
            hint="",
        )
        output: str | list[ResponseFunctionCallOutputItemParam]
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            output = parts[0].text
        else:
            output = [_output_item(part, index) for index, part in enumerate(parts) if part != TextPart("")]
        items.append({"type": "function_call_output", "call_id": result.call_id, "output": output})
    return items


def _output_item(part: Part, index: int) -> ResponseFunctionCallOutputItemParam:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    url = f"data:{part.mime_type};base64,{base64.b64encode(part.data).decode('ascii')}"
    if part.mime_type in _IMAGE_TYPES:
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    filename = (part.uri or "").rsplit("/", 1)[-1] or f"file-{index + 1}.pdf"
    return {"type": "input_file", "file_data": url, "filename": filename}


def mcp_call_item(
    result: ToolResult,
    *,
    server_label: str | None = None,
    name: str | None = None,
    arguments: str | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``result`` as the OpenAI Responses API ``mcp_call`` output item (an ``McpCall``).

    The server label, the wire name and the arguments are read from the metadata an
    MCP row records (``MCP_SERVER_LABEL``, ``MCP_WIRE_NAME``, ``MCP_ARGUMENTS``);
    pass them for results that have none (a call refused before it reached the row).
    A failure is reported the way OpenAI reports it: ``mcp_tool_execution_error``
    with the server's content for an ``isError`` result, ``mcp_protocol_error``
    with a JSON-RPC code otherwise (``http_error`` when an HTTP status is known).

    Raises:
        ValueError: when no server label or wire name is known.
    """
    label = server_label if server_label is not None else result.metadata.get(MCP_SERVER_LABEL)
    wire = name if name is not None else result.metadata.get(MCP_WIRE_NAME)
    if label is None or wire is None:
        raise ValueError(
            f"result of {result.name!r} (a {result.kind} row) has no MCP server label or wire name; "
            "pass server_label= and name= to describe it as an mcp_call item"
        )
    args = arguments if arguments is not None else result.metadata.get(MCP_ARGUMENTS)
    item: dict[str, Any] = {
        "type": "mcp_call",
        "id": result.call_id,
        "server_label": label,
        "name": wire,
        "arguments": args if isinstance(args, str) else json.dumps(dict(args or {}), ensure_ascii=False),
        "output": None,
        "error": None,
        "status": "completed",
    }
    if result.disposition in (Disposition.SUCCEEDED, Disposition.SKIPPED):
        item["output"] = result.presentation.as_text()
        return item
    item["status"] = "incomplete" if result.error is not None and result.error.kind.value == "cancelled" else "failed"
    item["error"] = _mcp_call_error(result)
    return item


def _mcp_call_error(result: ToolResult) -> dict[str, Any]:
    raw = result.mcp_result
    if raw is not None and getattr(raw, "is_error", False):
        content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in raw.content]
        return {"type": "mcp_tool_execution_error", "content": content}
    error = result.error
    message = result.presentation.as_text()
    if error is not None and error.http_status is not None:
        return {"type": "http_error", "code": error.http_status, "message": message}
    code = error.code if error is not None and isinstance(error.code, int) else None
    if code is None:
        code = _JSONRPC_CODES.get(error.kind.value if error is not None else "", -32603)
    return {"type": "mcp_protocol_error", "code": code, "message": message}
