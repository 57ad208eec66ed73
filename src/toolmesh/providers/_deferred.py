"""What the provider modules share about deferred rows: what a catalog offers now, and search results.

A ``ToolSnapshot`` with deferred rows declares, at each model call, its rows declared up
front, the deferred rows its searches found so far and its search row (``offered()``); a
``ToolRegistry`` declares its rows that are not deferred. Any other iterable of rows is
declared whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolmesh._core.metadata import SEARCH_FOUND
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._rows.rows import DynamicEntry, Entry, McpEntry
from toolmesh._search.policy import DEFAULT_SEARCH_TOOL

from ._common import ToolSource

__all__ = ["Deferral", "deferral", "found_rows", "namespaces", "offered", "search_tool_name"]


def offered(catalog: ToolSource) -> ToolSource:
    """The rows to declare now: a snapshot's or registry's ``offered()``, any other source whole."""
    if isinstance(catalog, ToolSnapshot | ToolRegistry):
        return catalog.offered()
    return catalog


@dataclass(frozen=True, slots=True)
class Deferral:
    """A snapshot's rows split for a provider with a search of its own."""

    snapshot: ToolSnapshot
    declared: list[Entry]
    """Rows declared up front (the search row left out), in catalog order."""
    deferred: list[Entry]
    """Deferred rows, found or not, in catalog order."""
    search_row: DynamicEntry
    """The turn's search row."""


def deferral(catalog: ToolSource) -> Deferral | None:
    """``catalog`` split into declared and deferred rows, or None when it defers nothing."""
    if not isinstance(catalog, ToolSnapshot) or catalog.search_row is None:
        return None
    deferred_names = catalog.deferred
    declared: list[Entry] = []
    deferred: list[Entry] = []
    for row in catalog:
        if row is catalog.search_row:
            continue
        (deferred if row.name in deferred_names else declared).append(row)
    return Deferral(catalog, declared, deferred, catalog.search_row)


def search_tool_name(catalog: ToolSource | None) -> str:
    """The name a search call of ``catalog``'s turn is dispatched under."""
    if isinstance(catalog, ToolSnapshot) and catalog.search_row is not None:
        return catalog.search_row.name
    return DEFAULT_SEARCH_TOOL


def found_rows(result: ToolResult) -> tuple[Entry, ...] | None:
    """The rows a search row call found (None for any other result)."""
    found = result.metadata.get(SEARCH_FOUND)
    return tuple(found) if isinstance(found, tuple) else None


def namespaces(rows: Iterable[Entry]) -> tuple[list[Entry], dict[str, list[Entry]]]:
    """``rows`` split into rows of no server (in order) and MCP rows by server label (servers in order)."""
    loose: list[Entry] = []
    servers: dict[str, list[Entry]] = {}
    for row in rows:
        if isinstance(row, McpEntry):
            servers.setdefault(row.server, []).append(row)
        else:
            loose.append(row)
    return loose, servers


def record_found(catalog: Any, names: list[str], search: str, query: str | None) -> None:
    """Record what a provider's own search found, when ``catalog`` is a snapshot (else nothing to record)."""
    if isinstance(catalog, ToolSnapshot) and names:
        catalog.record_found(names, search=search, query=query)
