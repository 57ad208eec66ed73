"""A deferred declared server's search, reported as OpenAI reports its own: ``tool_search_call`` and
``tool_search_output`` items.

A request-declared ``mcp`` tool with ``defer_loading: true`` offers the upstream model the
turn's ``search_tools`` function instead of its tools; a call of it is shown in the
response as a ``tool_search_call`` item (``execution: "server"``: the gateway is the
server here) and its answer as a ``tool_search_output`` item whose ``tools`` name, per
declared server, the tools it loaded (an ``mcp`` tool with ``allowed_tools``).
"""

from __future__ import annotations

import json
from typing import Any

from toolmesh._core.metadata import SEARCH_FOUND
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.snapshot import SnapshotSearch, ToolSnapshot
from toolmesh._rows.rows import Entry, McpEntry
from toolmesh._search.matches import AsyncRanker, Ranker
from toolmesh._search.policy import DEFAULT_SEARCH_TOOL, DeferPolicy

from .items import new_id
from .servers import Declared

__all__ = ["deferred_search", "search_items"]


def search_items(
    snapshot: ToolSnapshot, result: ToolResult | None, call_id: str, arguments: str | None
) -> dict[str, Any]:
    """The ``tool_search_call`` item of a search about to run (``result`` None), else its ``tool_search_output``."""
    if result is None:
        try:
            parsed: Any = json.loads(arguments or "{}")
        except ValueError:
            parsed = {}
        return {
            "type": "tool_search_call",
            "id": new_id("tsc"),
            "call_id": call_id,
            "execution": "server",
            "status": "completed",
            "arguments": parsed if isinstance(parsed, dict) else {},
        }
    found = result.metadata.get(SEARCH_FOUND, ())
    servers: dict[str, list[str]] = {}
    for row in found if isinstance(found, tuple) else ():
        if isinstance(row, McpEntry):
            servers.setdefault(row.server, []).append(row.wire_name)
    tools = [{"type": "mcp", "server_label": label, "allowed_tools": names} for label, names in servers.items()]
    return {
        "type": "tool_search_output",
        "id": new_id("tso"),
        "call_id": call_id,
        "execution": "server",
        "status": "completed" if result.ok else "incomplete",
        "tools": tools,
    }


def deferred_search(
    rows: dict[str, Entry], declared: list[Declared], ranker: Ranker | AsyncRanker | None
) -> SnapshotSearch | None:
    """The turn's search over the rows of declared servers with ``defer_loading: true`` (None: nothing deferred),
    fused with ``ranker`` when there is one."""
    deferred = frozenset(row.name for server in declared if server.spec.defer_loading for row in server.rows)
    if not deferred:
        return None
    name = DEFAULT_SEARCH_TOOL if DEFAULT_SEARCH_TOOL not in rows else f"toolmesh_{DEFAULT_SEARCH_TOOL}"
    return SnapshotSearch(DeferPolicy(search_tool=name), ranker, deferred, lambda: None, True)
