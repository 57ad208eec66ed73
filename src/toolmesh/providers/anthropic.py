"""Anthropic Messages: tool declarations out, ``tool_use`` blocks in, ``tool_result`` blocks back.

Example:
    >>> from toolmesh.providers import anthropic as claude
    >>> message = client.messages.create(model=..., max_tokens=1024, messages=messages, tools=claude.tools(snapshot))
    >>> messages.append({"role": "assistant", "content": message.content})
    >>> results = await run_tool_calls(snapshot, claude.parse_tool_calls(message))
    >>> messages.append(claude.tool_results(results))

Tool results carry text, images (JPEG, PNG, GIF, WebP) and PDF documents; a failed or
refused call is marked ``is_error``. Hosted rows for Anthropic (server tools such as
``{"type": "web_search_20250305", "name": "web_search"}``) are declared as they are.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._rows.rows import HostedEntry, McpEntry

from ._common import (
    InvalidNames,
    MediaPart,
    TextPart,
    ToolSource,
    check_hosted,
    entries,
    get,
    is_error,
    make_call,
    plain,
    render,
)
from ._declarations import copy_top, declarations, freeze
from ._deferred import deferral, found_rows, offered, record_found

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam, ToolUnionParam
    from anthropic.types.beta import BetaMCPToolConfigParam, BetaMCPToolParamParam, BetaMCPToolsetParam
    from anthropic.types.tool_result_block_param import Content

__all__ = ["ToolSearchMode", "mcp_toolset", "parse_tool_calls", "tool_results", "tools"]

ToolSearchMode: TypeAlias = Literal["bm25", "regex", "client"]
"""How a turn with deferred rows searches on Anthropic (see ``tools``)."""
_SEARCH_TOOLS: dict[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}

_API = "the Anthropic Messages API"
_PROVIDER = "anthropic"
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_DOCUMENT_TYPES = frozenset({"application/pdf"})
_ImageType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


def tools(
    catalog: ToolSource, *, invalid_names: InvalidNames = "skip", tool_search: ToolSearchMode = "bm25"
) -> list[ToolUnionParam]:
    """The ``tools=`` of ``messages.create``: client tools and Anthropic server tools, in catalog order.

    A snapshot with deferred rows declares them with ``defer_loading: true`` (Anthropic
    keeps them out of the model's context until a search references them) and adds a
    search tool, as ``tool_search`` says: ``"bm25"`` or ``"regex"``, Anthropic's own tool
    search (``parse_tool_calls(message, catalog=snapshot)`` records what it found), or
    ``"client"``, the turn's search row as a client tool, answered by toolmesh's index with
    ``tool_reference`` blocks (``tool_results``).

    Args:
        catalog: A ``ToolRegistry``, a ``ToolSnapshot`` (what the turn will dispatch) or an
            iterable of rows or ``ToolDefinition``s.
        invalid_names: A row whose name the Anthropic rule rejects is left out with a
            warning (``"skip"``), so the others can still be declared; ``"raise"`` refuses
            the whole catalog instead. ``rejected_names(catalog, "anthropic")`` lists them.

    Returns:
        Fresh top-level dicts (add ``cache_control`` to one freely); a client tool's
        ``input_schema`` is cached per row and read-only (``FrozenDict``): copy it to change it.

    Raises:
        UnsupportedToolError: for another provider's hosted tool, or a rejected name with
            ``invalid_names="raise"``.
    """
    split = deferral(catalog)
    if split is None:
        return declarations(
            offered(catalog), _API, _tool, copy_top, _hosted, provider=_PROVIDER, api=_API, invalid_names=invalid_names
        )
    if tool_search not in ("bm25", "regex", "client"):
        raise ValueError(f"tool_search must be 'bm25', 'regex' or 'client', not {tool_search!r}")
    declared = declarations(
        split.declared, _API, _tool, copy_top, _hosted, provider=_PROVIDER, api=_API, invalid_names=invalid_names
    )
    deferred = declarations(
        split.deferred, _API, _tool, copy_top, _hosted, provider=_PROVIDER, api=_API, invalid_names=invalid_names
    )
    for item in deferred:
        cast("dict[str, Any]", item)["defer_loading"] = True
    declared.extend(deferred)
    if tool_search == "client":
        declared.append(_tool(split.search_row.definition))
    else:
        declared.append(cast("ToolUnionParam", dict(_SEARCH_TOOLS[tool_search])))
    return declared


def mcp_toolset(
    catalog: ToolSource,
    server: str,
    *,
    default_config: Mapping[str, bool] | None = None,
    configs: Mapping[str, Mapping[str, bool]] | None = None,
    pin: bool = True,
) -> BetaMCPToolsetParam:
    """An ``mcp_toolset`` tool: Anthropic's MCP connector calls ``server`` itself, deferred as the catalog says.

    Declared with ``client.beta.messages.create(..., mcp_servers=[{"type": "url", "name": server,
    "url": ...}], tools=[mcp_toolset(snapshot, server)], betas=[...])``; the server must be
    reachable by Anthropic (for example ``toolmesh serve`` in front of the registry).

    ``default_config`` is ``{"defer_loading": True}`` when most of the server's rows in
    ``catalog`` are deferred (row settings, ``McpServer(defer_loading=...)``, the
    ``DeferPolicy``), else ``{"defer_loading": False}``; ``configs`` then names, by the
    server's own tool name, each row deferred otherwise. Your ``default_config`` replaces
    the default (``enabled``, or which ``defer_loading`` is the default: the rows the catalog
    defers otherwise are still named in ``configs``, so Anthropic defers exactly what the
    catalog defers); your ``configs`` (keyed by the server's tool name or the row's name)
    override a tool's entry, and what they say is what Anthropic applies.

    Args:
        catalog: A ``ToolSnapshot`` (its deferral), a ``ToolRegistry`` or an iterable of rows
            (each row's own ``defer_loading``).
        server: The MCP server's label in the catalog; also the ``mcp_server_name``.
        default_config: ``{"defer_loading": bool, "enabled": bool}`` for every tool of the server.
        configs: The same per tool, over the default.
        pin: Send the catalog's listing of the server (``tools``: names, descriptions and
            input schemas as the server listed them), so Anthropic offers exactly the tools
            the catalog holds and does not list the server before sampling. ``False`` lets
            Anthropic list the server (tools the catalog filtered out are then offered too).

    Raises:
        ValueError: the catalog holds no tool of ``server``, a ``configs`` key names none of
            them, or a config has another key than ``defer_loading`` and ``enabled``.
    """
    rows, deferred = _server_rows(catalog, server)
    if not rows:
        raise ValueError(f"the catalog holds no tool of MCP server {server!r}")
    default: dict[str, bool] = {"defer_loading": 2 * sum(row.name in deferred for row in rows) > len(rows)}
    default |= _config(default_config, "default_config")
    per_tool: dict[str, BetaMCPToolConfigParam] = {}
    for row in rows:
        if (row.name in deferred) != default["defer_loading"]:
            per_tool[row.wire_name] = {"defer_loading": row.name in deferred}
    by_name = {key: row.wire_name for row in rows for key in (row.name, row.wire_name)}
    for key, config in (configs or {}).items():
        if key not in by_name:
            raise ValueError(f"configs names {key!r}, which is no tool of MCP server {server!r} in the catalog")
        wire = by_name[key]
        merged = {**per_tool.get(wire, {}), **_config(config, f"configs[{key!r}]")}
        per_tool[wire] = cast("BetaMCPToolConfigParam", merged)
    toolset: BetaMCPToolsetParam = {
        "type": "mcp_toolset",
        "mcp_server_name": server,
        "default_config": cast("Any", default),
    }
    if per_tool:
        toolset["configs"] = per_tool
    if pin:
        toolset["tools"] = [_listed(row) for row in rows]
    return toolset


def _server_rows(catalog: ToolSource, server: str) -> tuple[list[McpEntry], frozenset[str]]:
    """The MCP rows of ``server`` in ``catalog``, in order, and the names of the deferred ones."""
    if isinstance(catalog, ToolRegistry):
        deferred = catalog.deferred_names()
        source: Iterable[object] = catalog.snapshot(defer=False)
    elif isinstance(catalog, ToolSnapshot):
        deferred, source = catalog.deferred, catalog
    else:
        source = list(catalog)
        deferred = frozenset(row.name for row in source if isinstance(row, McpEntry) and row.defer_loading)
    return [row for row in source if isinstance(row, McpEntry) and row.server == server], deferred


def _config(config: Mapping[str, bool] | None, what: str) -> dict[str, bool]:
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise ValueError(f"{what} must be a mapping like {{'defer_loading': True}}, not {type(config).__name__}")
    for key, value in config.items():
        if key not in ("defer_loading", "enabled") or not isinstance(value, bool):
            raise ValueError(f"{what}: only 'defer_loading' and 'enabled' (true or false) are set, not {key}={value!r}")
    return dict(config)


def _listed(row: McpEntry) -> BetaMCPToolParamParam:
    listed: BetaMCPToolParamParam = {"name": row.wire_name, "input_schema": dict(row.tool.input_schema)}
    if row.tool.description:
        listed["description"] = row.tool.description
    return listed


def _hosted(row: HostedEntry) -> ToolUnionParam:
    return cast("ToolUnionParam", plain(check_hosted(row, (_PROVIDER,), _API)))


def _tool(definition: ToolDefinition) -> ToolUnionParam:
    tool: ToolParam = {"name": definition.name, "input_schema": dict(definition.parameters)}
    if definition.description:
        tool["description"] = definition.description
    return cast("ToolUnionParam", freeze(tool))


def parse_tool_calls(message: object, *, catalog: ToolSource | None = None) -> list[ToolCall]:
    """The ``tool_use`` blocks of a ``Message`` (or of its content list), in order.

    With ``catalog`` a turn's snapshot, the tools Anthropic's own tool search referenced
    (``tool_search_tool_result`` blocks) are recorded on it as found.

    Plain dicts of the same shapes work too (``{"content": [...]}``). Nothing the model
    wrote makes it raise: input that is not a JSON object gives an invalid ``ToolCall``
    (``problem`` set); a ``content`` that is neither text nor a list gives no calls and a
    warning, and an entry that is not a ``tool_use`` object is skipped. Server tools'
    blocks (``server_tool_use``, ...) run at Anthropic and are skipped too.
    """
    if isinstance(message, list | tuple):
        blocks: Sequence[object] = message
    elif isinstance(get(message, "content"), str):
        return []  # text only, as a MessageParam may hold
    else:
        blocks = entries(message, "content", api=_API)
    calls: list[ToolCall] = []
    searches: dict[str, tuple[str, str | None]] = {}
    for index, block in enumerate(blocks):
        kind = get(block, "type")
        if kind == "server_tool_use":
            query = get(get(block, "input", {}), "query") or get(get(block, "input", {}), "pattern")
            searches[str(get(block, "id"))] = (str(get(block, "name")), query if isinstance(query, str) else None)
            continue
        if kind == "tool_search_tool_result":
            search, query = searches.get(str(get(block, "tool_use_id")), ("tool_search", None))
            references = get(get(block, "content", {}), "tool_references", [])
            names = [get(ref, "tool_name") for ref in references if isinstance(get(ref, "tool_name"), str)]
            record_found(catalog, names, search, query[:200] if query else None)
            continue
        if kind != "tool_use":
            continue
        calls.append(
            make_call(get(block, "id"), get(block, "name"), get(block, "input"), provider=_PROVIDER, index=index)
        )
    return calls


def tool_results(results: Iterable[ToolResult], *, describe_unsupported: bool = False) -> MessageParam:
    """The ``user`` message answering every call of the turn: one ``tool_result`` block per result, in order.

    Each block names its call by ``tool_use_id``; a failed or refused call has
    ``is_error: true`` and its feedback text. A call of the turn's search row that found
    tools answers with one ``tool_reference`` block per tool found.

    Args:
        results: The turn's results (``ToolResult.presentation`` is what is sent).
        describe_unsupported: Replace content Anthropic cannot carry (audio, other binary
            types) by a short note instead of refusing it.

    Raises:
        UnsupportedContentError: for such content, unless ``describe_unsupported``.
    """
    blocks: list[ToolResultBlockParam] = []
    for result in results:
        parts = render(
            result,
            api="an Anthropic tool_result",
            media_types=_IMAGE_TYPES | _DOCUMENT_TYPES,
            describe_unsupported=describe_unsupported,
            hint="",
        )
        block: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": result.call_id}
        found = found_rows(result)
        if found:
            block["content"] = [{"type": "tool_reference", "tool_name": row.name} for row in found]
            blocks.append(block)
            continue
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            if parts[0].text:
                block["content"] = parts[0].text
        else:
            block["content"] = [_content(part) for part in parts if part != TextPart("")]
        if is_error(result):
            block["is_error"] = True
        blocks.append(block)
    return {"role": "user", "content": blocks}


def _content(part: TextPart | MediaPart) -> Content:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    data = base64.b64encode(part.data).decode("ascii")
    if part.mime_type == "application/pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}
    media_type = cast(_ImageType, part.mime_type)
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
