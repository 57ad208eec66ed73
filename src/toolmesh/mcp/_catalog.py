"""Discovery: every page of one server's ``tools/list``, and the rows made from it.

Listing is bounded by the server spec: a cursor the server already gave, more pages
than ``max_pages``, more tools than ``max_tools`` (unless ``on_too_many_tools="keep_first"``,
which keeps the first ones with a warning), a description longer than
``max_description_chars`` or a schema larger than ``max_schema_bytes`` is a discovery
error naming the server, the limit and how to raise it; never a hang or a silent
truncation. At connect, rows are made all-or-nothing: names are assigned for
the whole server at once by the ``NamePolicy``, so a collision leaves nothing
half-added. At a refresh, a colliding tool is left out instead (``rebuild_rows``).

Each row gets its schemas compiled once, here (``_schema.compile_schema``): the
``inputSchema`` (unless the spec turns ``validate_arguments`` off) to check the model's
arguments before the wire, the ``outputSchema`` to check results. A schema that cannot
be used is reported with a warning and that row skips the check; it never fails
discovery. Tools that can only run as tasks (``execution.taskSupport: "required"``)
are rows like any other: their calls run as tasks (``_tasks``).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types
import pydantic_core
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._entries import McpCaller, McpEntry
from .._errors import NameCollisionError, ServerConnectionError
from .._names import NamePolicy, describe_mcp_tool
from ._convert import tool_capabilities, tool_definition
from ._schema import compile_schema

if TYPE_CHECKING:
    from mcp import Client

    from ._config import McpServer

__all__ = ["build_rows", "discover_tools", "owners", "rebuild_rows", "select_tools"]

logger = logging.getLogger("toolmesh.mcp")


async def discover_tools(client: Client, spec: McpServer) -> list[mcp_types.Tool]:
    """Every tool the server lists, in the server's order, following ``nextCursor``, within the spec's limits.

    Raises:
        ServerConnectionError: when the server repeats a cursor, has more than
            ``max_pages`` pages or more than ``max_tools`` tools (unless the spec keeps
            the first ones), or a tool's description or schema is over its limit.
            Errors of the session itself propagate unchanged.
    """
    server, max_pages = spec.label, spec.max_pages
    tools: list[mcp_types.Tool] = []
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, max_pages + 1):
        # The first page always goes to the server: a connect or refresh wants today's list.
        result = await client.list_tools(cursor=cursor, cache_mode="refresh" if cursor is None else "use")
        for tool in result.tools:
            if spec.allows(tool.name):
                _check_size(spec, tool)
        tools.extend(result.tools)
        cursor = result.next_cursor or None
        if len(tools) > spec.max_tools:
            return _too_many(spec, tools, more=cursor is not None)
        if cursor is None:
            return tools
        if cursor in seen:
            raise ServerConnectionError(
                server,
                f"tools/list page {page} returned the cursor {cursor!r} a second time, so its paging never "
                "ends; fix the server's pagination",
            )
        seen.add(cursor)
    raise ServerConnectionError(
        server,
        f"tools/list has more than {max_pages} pages ({len(tools)} tools so far); if the catalog really is "
        f"that large, raise max_pages on the server spec, or narrow it with include=[...]",
    )


def _too_many(spec: McpServer, tools: list[mcp_types.Tool], *, more: bool) -> list[mcp_types.Tool]:
    count = f"{len(tools)}{' or more' if more else ''}"
    if spec.on_too_many_tools == "keep_first":
        logger.warning(
            "MCP server %r lists %s tools, more than max_tools=%d: keeping the first %d "
            "(raise max_tools on the server spec to keep them all)",
            spec.label,
            count,
            spec.max_tools,
            spec.max_tools,
        )
        return tools[: spec.max_tools]
    raise ServerConnectionError(
        spec.label,
        f"tools/list has {count} tools, more than max_tools={spec.max_tools}; raise max_tools on the server "
        'spec, or keep the first ones with on_too_many_tools="keep_first"',
    )


def _check_size(spec: McpServer, tool: mcp_types.Tool) -> None:
    """Refuse a tool whose description or schemas are larger than the spec allows."""
    description = tool.description or ""
    if len(description) > spec.max_description_chars:
        raise ServerConnectionError(
            spec.label,
            f"the description of tool {tool.name!r} has {len(description)} characters, more than "
            f"max_description_chars={spec.max_description_chars}; raise max_description_chars on the server "
            "spec, or leave the tool out with exclude=[...]",
        )
    for field, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        if schema is None:
            continue
        size = len(pydantic_core.to_json(schema))
        if size > spec.max_schema_bytes:
            raise ServerConnectionError(
                spec.label,
                f"the {field} of tool {tool.name!r} has {size} bytes, more than max_schema_bytes="
                f"{spec.max_schema_bytes}; raise max_schema_bytes on the server spec, or leave the tool out "
                "with exclude=[...]",
            )


def select_tools(spec: McpServer, tools: Sequence[mcp_types.Tool]) -> list[mcp_types.Tool]:
    """The tools the spec's ``include``/``exclude`` filters keep, in the server's order."""
    kept = [tool for tool in tools if spec.allows(tool.name)]
    for pattern in spec.include or ():
        if not any(fnmatch.fnmatchcase(tool.name, pattern) for tool in tools):
            logger.warning("MCP server %r: include pattern %r matches none of its tools", spec.label, pattern)
    return kept


def build_rows(
    spec: McpServer,
    tools: Sequence[mcp_types.Tool],
    policy: NamePolicy,
    taken: Mapping[str, str],
    caller: McpCaller,
) -> list[McpEntry]:
    """The rows of one server, in the server's order; nothing when any name collides.

    Raises:
        NameCollisionError: when a model-visible name is in ``taken`` or two of the
            server's tools get one name (unless the policy de-duplicates).
    """
    names = policy.assign(
        spec.label, [tool.name for tool in tools], prefix=spec.prefix, aliases=spec.aliases, taken=taken
    )
    for raw in spec.aliases:
        if raw not in names:
            logger.warning("MCP server %r: alias for %r names no tool the server lists", spec.label, raw)
    rows = [_row(spec, names[tool.name], tool, caller) for tool in tools]
    return rows


def _row(spec: McpServer, name: str, tool: mcp_types.Tool, caller: McpCaller) -> McpEntry:
    """One tool's row, its schemas compiled."""
    label = spec.label
    checked_input = (
        compile_schema(tool.input_schema, server=label, tool=tool.name, what="inputSchema")
        if spec.validate_arguments
        else None
    )
    checked_output = compile_schema(tool.output_schema, server=label, tool=tool.name, what="outputSchema")
    return McpEntry(
        name,
        tool_definition(name, tool),
        tool_capabilities(tool, modern=getattr(caller, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS),
        label,
        tool.name,
        tool,
        caller,
        spec.call_timeout,
        max_presentation_chars=spec.max_presentation_chars,
        input_validator=checked_input,
        output_validator=checked_output,
    )


def rebuild_rows(
    spec: McpServer,
    tools: Sequence[mcp_types.Tool],
    policy: NamePolicy,
    taken: Mapping[str, str],
    caller: McpCaller,
    refused: list[str] | None = None,
) -> list[McpEntry]:
    """The rows of a refreshed listing: like ``build_rows``, but a collision drops only that tool.

    A refresh must not fail a server that is in use, and must never take a name another
    owner holds: each tool whose name collides is left out, with a warning naming both
    (and its name appended to ``refused``).
    """
    try:
        return build_rows(spec, tools, policy, taken, caller)
    except NameCollisionError:
        pass
    rows: list[McpEntry] = []
    claimed: dict[str, str] = dict(taken)
    for tool in tools:
        try:
            (row,) = build_rows(spec, [tool], policy, claimed, caller)
        except NameCollisionError as exc:
            logger.warning("MCP server %r: refresh leaves out tool %r: %s", spec.label, tool.name, exc)
            if refused is not None:
                refused.append(exc.name)
            continue
        rows.append(row)
        claimed[row.name] = describe_mcp_tool(spec.label, tool.name)
    return rows


def owners(rows: Mapping[str, Any], describe: Callable[[Any], str]) -> Mapping[str, str]:
    """A lazy ``name -> owner description`` view of existing rows, for ``NamePolicy.assign``."""
    return _Owners(rows, describe)


class _Owners(Mapping[str, str]):
    __slots__ = ("_describe", "_rows")

    def __init__(self, rows: Mapping[str, Any], describe: Callable[[Any], str]) -> None:
        self._rows = rows
        self._describe = describe

    def __getitem__(self, name: str) -> str:
        return self._describe(self._rows[name])

    def __contains__(self, name: object) -> bool:
        return name in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
