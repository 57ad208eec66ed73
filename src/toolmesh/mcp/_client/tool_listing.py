"""Discovery: every page of one server's ``tools/list``, and the rows made from it.

Listing is bounded by the server spec: a cursor the server already gave, more pages
than ``max_pages``, a page larger than ``max_page_bytes``, more tools than ``max_tools``
(unless ``on_too_many_tools="keep_first"``, which keeps the first ones with a warning), a
description longer than ``max_description_chars`` or a schema larger than
``max_schema_bytes`` is a discovery error naming the server, the limit and how to raise
it; never a hang or a silent truncation. Each is checked as early as it can be, a page's
size and count before the page is read into models (``listing_limits``). At connect,
rows are made all-or-nothing: names are assigned for the whole server at once by the
``NamePolicy``, so a collision leaves nothing half-added. At a refresh, a colliding tool
is left out instead (``rebuild_rows``).

A refresh keeps the rows of tools that did not change (``build_rows``' ``previous``):
only new and changed tools get new rows. A row is only its listed tool, its name and its
server's settings: its ``definition`` and ``capabilities`` are made from the tool at their
first read (``_hot_path.derive_on_first_read``), and it compiles its schemas at its first call,
not here (``McpEntry.input_validator``): the ``inputSchema`` (unless the spec turns
``validate_arguments`` off) to check the model's arguments before the wire, the
``outputSchema`` to check results; so discovery costs what the listing costs. A schema
that cannot be used is reported with a warning then, and that row skips the check; it
never fails discovery or the call. Tools that can only run as tasks
(``execution.taskSupport: "required"``) are rows like any other: their calls run as tasks
(``_tasks``).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types

from toolmesh._core.errors import NameCollisionError, ServerConnectionError
from toolmesh._core.names import NamePolicy, describe_mcp_tool
from toolmesh._core.slots import DERIVED, slot_constructor
from toolmesh._rows.rows import McpCaller, McpEntry

from .listing_limits import PageGuard, check_size, kept_first, too_many

if TYPE_CHECKING:
    from mcp import Client

    from toolmesh.mcp._spec.server import McpServer

    from .wire import Exchange

__all__ = ["build_rows", "discover_tools", "owners", "rebuild_rows"]

logger = logging.getLogger("toolmesh.mcp")


async def discover_tools(client: Client, spec: McpServer, sent: Exchange | None = None) -> list[mcp_types.Tool]:
    """Every tool the server lists that the spec's ``include``/``exclude`` keep, in the server's order,
    following ``nextCursor``, within the spec's limits (``max_tools`` counts the tools kept).

    Each page is guarded on the wire (``listing_limits.PageGuard``, through ``sent``, the
    listing's ``Exchange``): a page over its bound in bytes is refused before it is parsed,
    and one that takes the count past ``max_tools`` before a model of its tools is built.

    Raises:
        ServerConnectionError: when the server repeats a cursor, has more than
            ``max_pages`` pages or more than ``max_tools`` tools kept (unless the spec
            keeps the first ones), a page is larger than its bound, or a kept tool's
            description or schema is over its limit. Errors of the session itself
            propagate unchanged.
    """
    server, max_pages = spec.label, spec.max_pages
    tools: list[mcp_types.Tool] = []
    seen: set[str] = set()
    unmatched = set(spec.include or ())
    cursor: str | None = None
    for page in range(1, max_pages + 1):
        guard = PageGuard(spec, len(tools))
        if sent is not None:
            sent.guard = guard
        try:
            # The first page always goes to the server: a connect or refresh wants today's list.
            result = await client.list_tools(cursor=cursor, cache_mode="refresh" if cursor is None else "use")
        except Exception:
            if guard.refused is not None:
                raise guard.refused from None
            raise
        finally:
            if sent is not None:
                sent.guard = None
        kept = _kept(spec, result.tools)
        for tool in kept:
            check_size(spec, tool)
        tools.extend(kept)
        if guard.cut is not None:  # keep_first: the page was cut at max_tools
            kept_first(spec, *guard.cut)  # not all listed: no pattern is known unmatched
            return tools[: spec.max_tools]
        if unmatched:
            names = [tool.name for tool in result.tools]
            unmatched -= {pattern for pattern in unmatched if fnmatch.filter(names, pattern)}
        cursor = result.next_cursor or None
        if len(tools) > spec.max_tools:  # a transport toolmesh does not read (in-process)
            if spec.on_too_many_tools != "keep_first":
                raise too_many(spec, len(tools), cursor is not None)
            kept_first(spec, len(tools), cursor is not None)
            return tools[: spec.max_tools]
        if cursor is None:
            for pattern in sorted(unmatched):
                logger.warning("MCP server %r: include pattern %r matches none of its tools", spec.label, pattern)
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


def _kept(spec: McpServer, tools: Sequence[mcp_types.Tool]) -> list[mcp_types.Tool]:
    """The tools the spec's ``include``/``exclude`` filters keep, in the server's order."""
    if spec.include is None and not spec.exclude:
        return list(tools)
    return [tool for tool in tools if spec.allows(tool.name)]


def build_rows(
    spec: McpServer,
    tools: Sequence[mcp_types.Tool],
    policy: NamePolicy,
    taken: Mapping[str, str],
    caller: McpCaller,
    previous: Mapping[str, McpEntry] | None = None,
) -> list[McpEntry]:
    """The rows of one server, in the server's order; nothing when any name collides.

    ``previous`` (a refresh's current rows, by wire name) are kept as they are where the
    tool and its model-visible name did not change (``_unchanged``): only what changed
    gets a new row, so a refresh that changes nothing builds nothing.

    Raises:
        NameCollisionError: when a model-visible name is in ``taken`` or two of the
            server's tools get one name (unless the policy de-duplicates).
    """
    wire_names = [tool.name for tool in tools]
    if previous and len(previous) == len(wire_names) and list(previous) == wire_names:
        # The same tools in the same order: the names given before still hold (no other
        # owner can have taken one since: registering or connecting it would have collided).
        names = {wire: row.name for wire, row in previous.items()}
    else:
        names = policy.assign(spec.label, wire_names, prefix=spec.prefix, aliases=spec.aliases, taken=taken)
    for raw in spec.aliases:
        if raw not in names:
            logger.warning(
                "MCP server %r: alias for %r names none of the tools kept from the server (not listed, or left out "
                "by include/exclude or max_tools)",
                spec.label,
                raw,
            )
    protocol = getattr(caller, "protocol_version", None)
    if previous:
        rows = [
            _unchanged(previous.get(tool.name), names[tool.name], tool, protocol)
            or _row(spec, names[tool.name], tool, caller, protocol)
            for tool in tools
        ]
    else:
        rows = [_row(spec, names[tool.name], tool, caller, protocol) for tool in tools]
    return rows


_new_row = slot_constructor(McpEntry)


def _row(spec: McpServer, name: str, tool: mcp_types.Tool, caller: McpCaller, protocol: str | None) -> McpEntry:
    """One tool's row: definition and capabilities made at first read, schemas compiled at first call."""
    # every field by position, in McpEntry's order (discovery makes thousands)
    row: McpEntry = _new_row(
        name,
        DERIVED,  # definition
        DERIVED,  # capabilities
        spec.label,  # server
        tool.name,  # wire_name
        tool,
        caller,
        spec.call_timeout,  # timeout
        None,  # show_error_details
        spec.max_presentation_chars,
        spec.validate_arguments,
        protocol,  # protocol_version
        spec.defer_loading,
    )
    return row


def _unchanged(row: McpEntry | None, name: str, tool: mcp_types.Tool, protocol: str | None) -> McpEntry | None:
    """``row`` when it can stand for ``tool`` listed again under ``name`` on ``protocol``: same name, same
    tool as sent, same protocol version (a reconnect may speak another, which reads a tool differently).

    The cheap key is the listed model's own fields (``__dict__``, plus any extra fields
    the server sent): compared in C, with no dump or copy, where pydantic's ``==`` also
    walks its private and fields-set bookkeeping. A row holds nothing that is not made
    from its tool, its name and its server's spec, and a refresh's spec and connection
    are the rows' own.
    """
    if row is None or row.name != name or row.protocol_version != protocol:
        return None
    old = row.tool
    if old is tool or (old.__dict__ == tool.__dict__ and old.__pydantic_extra__ == tool.__pydantic_extra__):
        return row
    return None


def rebuild_rows(
    spec: McpServer,
    tools: Sequence[mcp_types.Tool],
    policy: NamePolicy,
    taken: Mapping[str, str],
    caller: McpCaller,
    refused: list[str] | None = None,
    previous: Mapping[str, McpEntry] | None = None,
) -> list[McpEntry]:
    """The rows of a refreshed listing: like ``build_rows`` (unchanged rows kept), but a collision drops only that tool.

    A refresh must not fail a server that is in use, and must never take a name another
    owner holds: each tool whose name collides is left out, with a warning naming both
    (and its name appended to ``refused``).
    """
    try:
        return build_rows(spec, tools, policy, taken, caller, previous)
    except NameCollisionError:
        pass
    rows: list[McpEntry] = []
    claimed: dict[str, str] = dict(taken)
    for tool in tools:
        try:
            (row,) = build_rows(spec, [tool], policy, claimed, caller, previous)
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
