"""A profile served in search mode: two tools, ``search_tools`` and ``call_tool``, instead of the catalog.

For MCP clients that cannot hold a large catalog (as LiteLLM's and FastMCP's search modes
offer): ``search_tools`` returns the profile's rows that best match a query, with their
input schemas; ``call_tool`` calls one of the profile's rows by name, through the same
validation, policy and hooks as a plain ``tools/call`` of it. Any row of the profile may be
called, found or not: an MCP session is not one model turn.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types

from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh.gateway._shared.catalog_view import mcp_tool

__all__ = ["CALL_TOOL", "SEARCH_TOOL", "schema_of", "search_mode_call", "search_tools"]

SEARCH_TOOL = "search_tools"
CALL_TOOL = "call_tool"
_DEFAULT_LIMIT = 5
_MAX_LIMIT = 20

_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "The task to find tools for, in a few words."},
        "limit": {"type": "integer", "minimum": 1, "maximum": _MAX_LIMIT, "description": "How many tools to return."},
    },
    "required": ["query"],
}
_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The tool's name, as search_tools returned it."},
        "arguments": {"type": "object", "description": "The tool's arguments, as its input schema describes."},
    },
    "required": ["name"],
}
_READ_ONLY = mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def search_tools() -> list[mcp_types.Tool]:
    """The two tools a search-mode profile lists."""
    return [
        mcp_types.Tool(
            name=SEARCH_TOOL,
            title="Search tools",
            description=(
                "Search the tools this server offers. Describe the task in a few words; the result lists the "
                "matching tools with their input schemas. Call one with call_tool."
            ),
            input_schema=_SEARCH_SCHEMA,
            annotations=_READ_ONLY,
        ),
        mcp_types.Tool(
            name=CALL_TOOL,
            title="Call a tool",
            description="Call a tool found with search_tools, by name, with arguments matching its input schema.",
            input_schema=_CALL_SCHEMA,
        ),
    ]


def schema_of(name: str) -> dict[str, Any] | None:
    """The input schema of one of the two tools (None for any other name)."""
    return {SEARCH_TOOL: _SEARCH_SCHEMA, CALL_TOOL: _CALL_SCHEMA}.get(name)


def _error(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], is_error=True)


async def search_answer(snapshot: ToolSnapshot, arguments: dict[str, Any] | None) -> mcp_types.CallToolResult:
    """The answer of a ``search_tools`` call: the best rows of ``snapshot`` with their schemas."""
    arguments = arguments or {}
    query = arguments.get("query")
    limit = arguments.get("limit", _DEFAULT_LIMIT)
    if not isinstance(query, str):
        return _error("search_tools needs a 'query' string: the task to find tools for.")
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)  # 2.0 is an integer to JSON Schema, and models write it
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        return _error(f"search_tools: 'limit' must be a whole number from 1 to {_MAX_LIMIT}.")
    matches = await snapshot.asearch(query, limit=min(limit, _MAX_LIMIT))
    tools = []
    for match in matches:
        listed = mcp_tool(match.row)
        tools.append({"name": listed.name, "description": listed.description or "", "inputSchema": listed.input_schema})
    structured = {"tools": tools}
    text = json.dumps(structured, ensure_ascii=False) if tools else "No tool matches; try other words for the task."
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)], structured_content=structured)


def unwrap_call(
    params: mcp_types.CallToolRequestParams,
) -> mcp_types.CallToolRequestParams | mcp_types.CallToolResult:
    """The inner call of a ``call_tool`` call, or the error answer for one that names no tool."""
    arguments = params.arguments or {}
    name = arguments.get("name")
    inner = arguments.get("arguments", {})
    if not isinstance(name, str) or not name:
        return _error("call_tool needs a 'name': the tool to call, as search_tools returned it.")
    if name in (SEARCH_TOOL, CALL_TOOL):
        return _error(f"call_tool calls the tools search_tools finds, not {name!r} itself.")
    if not isinstance(inner, dict):
        return _error("call_tool: 'arguments' must be an object of the tool's arguments.")
    return params.model_copy(update={"name": name, "arguments": inner})


async def search_mode_call(
    snapshot: ToolSnapshot, params: mcp_types.CallToolRequestParams
) -> mcp_types.CallToolRequestParams | mcp_types.CallToolResult:
    """A search-mode ``tools/call``: the answer (a search, or an error), or the inner call to dispatch."""
    if params.name == SEARCH_TOOL:
        return await search_answer(snapshot, params.arguments)
    if params.name != CALL_TOOL:
        return _error(f"Unknown tool {params.name!r}: use search_tools, then call_tool.")
    return unwrap_call(params)
